// Weight gradients emitted in place, or held by a zero-bubble B pass for its W pass.
#include "sim/workload/context.h"
#include "sim/workload/errors.h"

namespace trainsim::workload {

void weight_grad_gemm(BuildContext& ctx, OpLabel label, int64_t m, int64_t n, int64_t k, int64_t elements,
                      OpId after, double useful) {
  if (ctx.holding != nullptr) {
    ctx.holding->work.push_back({ctx.w.position(), label, m, n, k, 1, useful, after, kNoOp, elements, false});
    return;
  }
  ctx.grads.produced(ctx.w.grouped_gemm(label, GemmPass::kWeightGrad, 1, m, n, k, useful, {after}), elements);
}

void expert_weight_grad_gemm(BuildContext& ctx, OpLabel label, int64_t m, int64_t n, int64_t k,
                             int64_t elements, OpId after) {
  const RankShapes& s = ctx.shapes;
  const auto groups = static_cast<int32_t>(s.local_experts);
  const double useful = 1 / s.capacity_factor;
  if (ctx.holding != nullptr) {
    ctx.holding->work.push_back(
        {ctx.w.position(), label, m, n, k, groups, useful, after, kNoOp, elements, true});
    return;
  }
  ctx.expert_grads->produced(
      ctx.w.grouped_gemm(label, GemmPass::kWeightGrad, groups, m, n, k, useful, {after}), elements);
}

void gradients_done(BuildContext& ctx, OpId producer, int64_t elements) {
  if (ctx.holding != nullptr) {
    HeldWeightGrads::Work work;
    work.producer = producer;
    work.elements = elements;
    ctx.holding->work.push_back(work);
    return;
  }
  ctx.grads.produced(producer, elements);
}

void release_after_weight_grads(BuildContext& ctx, BufferId buffer) {
  if (ctx.holding != nullptr) {
    ctx.holding->buffers.push_back(buffer);
  } else {
    ctx.w.release(buffer, Stream::kCompute);
  }
}

void weight_grad_pass(BuildContext& ctx, int64_t virtual_stage, int64_t micro_batch) {
  const auto it = ctx.held.find({virtual_stage, micro_batch});
  TRAINSIM_WORKLOAD_CHECK(it != ctx.held.end())
      << "W pass of virtual stage " << virtual_stage << " mb " << micro_batch << " before its B pass";
  const HeldWeightGrads held = std::move(it->second);
  ctx.held.erase(it);
  GraphWriter& w = ctx.w;
  // A bucket waits for the last gradient it holds: gradients computed in the B pass count as done
  // with the W GEMM before them.
  OpId last_gemm = kNoOp;
  for (const HeldWeightGrads::Work& work : held.work) {
    if (work.m == 0) {
      ctx.grads.produced(last_gemm != kNoOp ? last_gemm : work.producer, work.elements);
      continue;
    }
    w.set_position(work.position);
    last_gemm = w.grouped_gemm(work.label, GemmPass::kWeightGrad, work.groups, work.m, work.n, work.k,
                               work.useful, {work.after});
    (work.expert ? *ctx.expert_grads : ctx.grads).produced(last_gemm, work.elements);
  }
  for (const BufferId buffer : held.buffers) w.release(buffer, Stream::kCompute);
}

}  // namespace trainsim::workload
