// What the dense and FPDT layers do around their bodies: ZeRO-3's parameter gathers and the layer
// input kept for the backward, on the GPU or checkpointed on the host.
#include "sim/workload/context.h"
#include "sim/workload/errors.h"

namespace trainsim::workload {

LayerForwardFrame open_layer_forward(BuildContext& ctx, int64_t layer, int64_t micro_batch, BufferId input,
                                     OpId input_ready, int64_t param_elements, double input_bytes) {
  GraphWriter& w = ctx.w;
  w.set_position({Phase::kForward, static_cast<int32_t>(layer), static_cast<int32_t>(micro_batch)});
  const OpId params = ctx.zero3 ? ctx.zero3->acquire(param_elements, false) : kNoOp;
  LayerState& state = ctx.state(layer, micro_batch);
  state.input = input;
  if (ctx.shapes.cpu_checkpointing) {
    state.host_input = w.alloc(OpLabel::kCheckpoint, MemoryCategory::kActivations, MemorySpace::kHost,
                               input_bytes, Stream::kCompute, {input_ready})
                           .buffer;
    w.copy(OpLabel::kOffload, CopyDirection::kDeviceToHost, input_bytes, Stream::kCompute);
  }
  return {params, state};
}

void close_layer_forward(BuildContext& ctx, LayerState& state) {
  if (ctx.zero3) ctx.zero3->release(kNoOp);
  if (ctx.shapes.cpu_checkpointing) {
    ctx.w.release(state.input, Stream::kCompute);
    state.input = -1;
  }
}

LayerBackwardFrame open_layer_backward(BuildContext& ctx, int64_t layer, int64_t micro_batch,
                                       int64_t param_elements) {
  const auto it = ctx.saved.find({layer, micro_batch});
  TRAINSIM_WORKLOAD_CHECK(it != ctx.saved.end())
      << "backward of layer " << layer << " mb " << micro_batch << " before its forward";
  LayerState state = std::move(it->second);
  ctx.saved.erase(it);
  ctx.w.set_position({Phase::kBackward, static_cast<int32_t>(layer), static_cast<int32_t>(micro_batch)});
  const OpId params = ctx.zero3 ? ctx.zero3->acquire(param_elements, true) : kNoOp;
  return {std::move(state), params};
}

void fetch_checkpointed_input(BuildContext& ctx, LayerState& state, double input_bytes) {
  if (!ctx.shapes.cpu_checkpointing) return;
  GraphWriter& w = ctx.w;
  state.input = w.alloc(OpLabel::kLayerInput, MemoryCategory::kActivations, MemorySpace::kHbm, input_bytes,
                        Stream::kCompute)
                    .buffer;
  w.copy(OpLabel::kFetch, CopyDirection::kHostToDevice, input_bytes, Stream::kCompute);
}

}  // namespace trainsim::workload
