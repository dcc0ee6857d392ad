#include "sim/workload/builder.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <numeric>
#include <optional>
#include <utility>

#include "sim/workload/context.h"
#include "sim/workload/errors.h"
#include "sim/workload/model_state.h"
#include "sim/workload/pipeline_schedule.h"
#include "sim/workload/runtime_memory.h"

namespace trainsim::workload {
namespace {

int64_t peer_on_stage(const ParallelPlan& plan, Coords coords, int64_t stage) {
  coords[Axis::kPp] = stage;
  return plan.rank_of(coords);
}

// Megatron-LM's scatter/gather of pipeline messages (Narayanan et al. 2021, section 4.1): without
// Megatron-SP the tensor crossing a stage boundary is identical on every TP rank, so each sends 1/tp
// of it over its own NIC and the receiving TP group all-gathers it over NVLink. Under Megatron-SP it
// is already sharded along the sequence.
bool scatter_gather(const RankShapes& s) { return s.tp > 1 && !s.megatron_sp; }

double pipeline_message_bytes(const RankShapes& s) {
  return scatter_gather(s) ? s.hidden_norm_bytes() / static_cast<double>(s.tp) : s.hidden_norm_bytes();
}

// What the first op using a received pipeline message waits for: the receive, or the all-gather
// that reassembles it.
OpId gather_pipeline_message(BuildContext& ctx, OpId received) {
  if (!scatter_gather(ctx.shapes)) return received;
  return ctx.w.collective(OpLabel::kPpComm, CollectiveKind::kAllGather, GroupKind::kTp,
                          ctx.shapes.hidden_norm_bytes(), Stream::kComm, {received});
}

// The all-gathers of a unit's tensors taken in order: each call adds the tensors that are sharded
// until it holds the gather bucket (zero3.h).
std::vector<int64_t> gather_calls(const RankShapes& s, const std::vector<int64_t>& tensors, bool backward) {
  const double bucket_elements = s.zero3_gather_bucket_elements;
  std::vector<int64_t> calls;
  int64_t call = 0;
  const auto add = [&](int64_t tensor) {
    if (s.zero3_persistent(tensor)) return;
    call += tensor;
    if (static_cast<double>(call) >= bucket_elements) calls.push_back(std::exchange(call, 0));
  };
  if (backward) {
    std::for_each(tensors.rbegin(), tensors.rend(), add);
  } else {
    std::for_each(tensors.begin(), tensors.end(), add);
  }
  if (call > 0) calls.push_back(call);
  return calls;
}

// The parameter uses ZeRO-3 will see, in the order the schedule runs them, with what each gathers,
// frees and reduces (the policies of zero3.h).
std::vector<ParamGatherer::Use> zero3_uses(const RankShapes& s, const StageLayout& layout, int64_t stage,
                                           const std::vector<PipelineStep>& steps) {
  // The units of each model chunk in forward order (embedding, layers, head) and their tensors.
  const std::vector<int64_t> per_layer = layer_tensors(s);
  const int64_t final_norm = norm_params(s);
  std::vector<std::vector<int64_t>> chunk_units(layout.vpp);
  std::vector<std::vector<int64_t>> tensors;
  for (int64_t chunk = 0; chunk < layout.vpp; ++chunk) {
    const int64_t v = layout.virtual_stage(stage, chunk);
    const auto add = [&](std::vector<int64_t> unit) {
      chunk_units[chunk].push_back(static_cast<int64_t>(tensors.size()));
      tensors.push_back(std::move(unit));
    };
    if (layout.has_embedding(v)) add({embedding_unit_elements(s)});
    for (int64_t l = 0; l < layout.layer_count[v]; ++l) add(per_layer);
    if (layout.has_head(v)) add({final_norm, head_unit_elements(s) - final_norm});
  }
  std::vector<int64_t> elements;
  elements.reserve(tensors.size());
  for (const std::vector<int64_t>& unit : tensors) elements.push_back(std::reduce(unit.begin(), unit.end()));
  const auto calls = [&](int64_t unit, bool backward) { return gather_calls(s, tensors[unit], backward); };
  std::vector<size_t> last_backward(layout.vpp, 0);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].pass == Pass::kBackward || steps[i].pass == Pass::kInputGrad)
      last_backward[steps[i].chunk] = i;
  }

  const bool per_iteration = s.zero3_per_iteration();
  std::vector<bool> held(elements.size(), false);
  std::vector<ParamGatherer::Use> uses;
  for (size_t i = 0; i < steps.size(); ++i) {
    const PipelineStep& step = steps[i];
    if (step.pass == Pass::kWeightGrad) continue;  // weights are not read
    const std::vector<int64_t>& units = chunk_units[step.chunk];
    if (step.pass == Pass::kForward) {
      for (const int64_t u : units) {
        const bool gather = !per_iteration || !held[u];
        uses.push_back({.elements = elements[u],
                        .backward = false,
                        .unit = u,
                        .gather = gather,
                        .free_after = !per_iteration && s.reshard_after_forward,
                        .reduce = {},
                        .calls = gather ? calls(u, false) : std::vector<int64_t>{},
                        .end_of_backward = false});
        held[u] = true;
      }
      continue;
    }
    for (auto it = units.rbegin(); it != units.rend(); ++it) {
      ParamGatherer::Use use{.elements = elements[*it],
                             .backward = true,
                             .unit = *it,
                             .gather = true,
                             .free_after = true,
                             .reduce = {},
                             .calls = {},
                             .end_of_backward = std::next(it) == units.rend()};
      if (per_iteration) {
        use.gather = false;
        use.free_after = false;
        if (i == last_backward[step.chunk] && use.end_of_backward) use.reduce = units;
      } else {
        use.gather = s.reshard_after_forward;
        use.reduce = {*it};
      }
      if (use.gather) use.calls = calls(*it, true);
      uses.push_back(use);
    }
  }
  return uses;
}

// The pipeline message a step starts from, received (and gathered) when another stage sent it:
// the forward's activations or the backward's output gradient. Empty when the step starts from its
// own stage's work (the embedding, the LM head's loss) or from a V's turn.
struct StepInput {
  BufferId buffer = -1;
  OpId ready = kNoOp;
};

// The input of `step`: its buffer, and the receive of the pipeline message (posted once `post_after`
// has run) or the op that leaves it on this stage.
StepInput receive_input(BuildContext& ctx, const PipelineStep& step, OpId post_after) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const StageLayout& layout = ctx.layout;
  const int64_t stage = ctx.coords.pp();
  const int64_t v = layout.virtual_stage(stage, step.chunk);
  const bool forward = step.pass == Pass::kForward;
  if (forward ? layout.has_embedding(v) || layout.stage_of(v - 1) == stage : layout.has_head(v)) return {};
  w.set_position({forward ? Phase::kForward : Phase::kBackward, -1, static_cast<int32_t>(step.micro_batch)});
  StepInput in;
  in.buffer = w.alloc(forward ? OpLabel::kLayerInput : OpLabel::kCommBuffer,
                      forward ? MemoryCategory::kActivations : MemoryCategory::kBuffers, MemorySpace::kHbm,
                      s.hidden_norm_bytes(), Stream::kCompute)
                  .buffer;
  // At the turn of a V the gradient was computed here.
  if (!forward && layout.stage_of(v + 1) == stage) return in;
  const int64_t peer = peer_on_stage(ctx.plan, ctx.coords, layout.stage_of(forward ? v - 1 : v + 1));
  const int64_t tag =
      p2p_tag(forward ? P2pKind::kPipelineActivation : P2pKind::kPipelineGradient, step.micro_batch, v, 0);
  in.ready = gather_pipeline_message(
      ctx, w.recv(OpLabel::kPpComm, peer, tag, pipeline_message_bytes(s), {post_after}));
  return in;
}

// Returns its pipeline send (kNoOp when its output stays on this stage).
OpId forward_step(BuildContext& ctx, const PipelineStep& step, StepInput in) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const StageLayout& layout = ctx.layout;
  const int64_t stage = ctx.coords.pp();
  const int64_t v = layout.virtual_stage(stage, step.chunk);
  const int32_t mb = static_cast<int32_t>(step.micro_batch);
  BufferId x = in.buffer;
  OpId ready = in.ready;
  if (layout.has_embedding(v)) {
    const EmbeddingOutput e = embedding_forward(ctx, step.micro_batch);
    x = e.buffer;
    ready = e.ready;
  } else if (layout.stage_of(v - 1) == stage) {
    // The turn of a V: the previous virtual stage ran here and left its output.
    const auto it = ctx.turning.find(step.micro_batch);
    TRAINSIM_WORKLOAD_CHECK(it != ctx.turning.end())
        << "V turn of mb " << step.micro_batch << " before its output";
    x = it->second;
    ctx.turning.erase(it);
  }
  const int64_t first = layout.first_layer[v];
  for (int64_t l = first; l < first + layout.layer_count[v]; ++l) {
    x = layer_forward(ctx, l, step.micro_batch, x, ready);
    ready = kNoOp;
  }
  if (layout.has_head(v)) {
    head_forward(ctx, step.micro_batch, x, ready);
  } else if (layout.stage_of(v + 1) == stage) {
    ctx.turning[step.micro_batch] = x;
  } else {
    w.set_position({Phase::kForward, -1, mb});
    const int64_t next = peer_on_stage(ctx.plan, ctx.coords, layout.stage_of(v + 1));
    const OpId sent =
        w.send(OpLabel::kPpComm, next, p2p_tag(P2pKind::kPipelineActivation, step.micro_batch, v + 1, 0),
               pipeline_message_bytes(s), {w.last(Stream::kCompute)});
    w.release(x, Stream::kP2p, {sent});
    return sent;
  }
  return kNoOp;
}

// The whole backward, or its B pass (which holds the weight gradients for the W pass). Returns its
// pipeline send, as forward_step.
OpId backward_step(BuildContext& ctx, const PipelineStep& step, StepInput in) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const StageLayout& layout = ctx.layout;
  const int64_t stage = ctx.coords.pp();
  const int64_t v = layout.virtual_stage(stage, step.chunk);
  const int32_t mb = static_cast<int32_t>(step.micro_batch);
  OpId ready = in.ready;
  BufferId received = in.buffer;
  OpId sent = kNoOp;
  if (step.pass == Pass::kInputGrad) ctx.holding = &ctx.held[{v, step.micro_batch}];
  if (layout.has_head(v)) ready = head_backward(ctx, step.micro_batch);
  const int64_t first = layout.first_layer[v];
  for (int64_t l = first + layout.layer_count[v] - 1; l >= first; --l) {
    ready = layer_backward(ctx, l, step.micro_batch, ready);
    if (received >= 0) {
      w.release(received, Stream::kCompute);
      received = -1;
    }
  }
  if (layout.has_embedding(v)) {
    embedding_backward(ctx, step.micro_batch, ready);
  } else if (layout.stage_of(v - 1) != stage) {  // at the turn of a V the gradient stays here
    w.set_position({Phase::kBackward, -1, mb});
    const BufferId grad = w.alloc(OpLabel::kCommBuffer, MemoryCategory::kBuffers, MemorySpace::kHbm,
                                  s.hidden_norm_bytes(), Stream::kCompute)
                              .buffer;
    const int64_t prev = peer_on_stage(ctx.plan, ctx.coords, layout.stage_of(v - 1));
    sent = w.send(OpLabel::kPpComm, prev, p2p_tag(P2pKind::kPipelineGradient, step.micro_batch, v - 1, 0),
                  pipeline_message_bytes(s), {w.last(Stream::kCompute), ready});
    w.release(grad, Stream::kP2p, {sent});
  }
  ctx.holding = nullptr;
  return sent;
}

// Gradients of parameters replicated over TP whose partial gradients differ per TP rank under
// sequence parallelism (LayerParams::replicated, and the final norm).
int64_t sequence_parallel_grad_elements(const RankShapes& s, const StageLayout& layout, int64_t stage) {
  int64_t elements = stage_layer_sum(s, layout, stage, &LayerParams::replicated);
  for (int64_t chunk = 0; chunk < layout.vpp; ++chunk) {
    if (layout.has_head(layout.virtual_stage(stage, chunk))) elements += norm_params(s);
  }
  return elements;
}

// Setup: the runtime's memory (sized in teardown, once the graph shows which communicators it uses)
// and this rank's model state (expert states sharded over the expert-data-parallel group, the rest
// over the data-parallel one), held for the whole iteration.
struct Setup {
  std::optional<GraphWriter::Allocation> runtime;
  std::vector<BufferId> persistent;
  ModelStateBytes state;
};

Setup set_up(BuildContext& ctx, int64_t stage, double bucket_bytes) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const config::Scenario& scenario = ctx.scenario;
  w.set_position({Phase::kSetup, -1, -1});
  Setup out;
  if (scenario.cluster.hardware.runtime_memory) {
    out.runtime =
        w.alloc(OpLabel::kRuntime, MemoryCategory::kRuntime, MemorySpace::kHbm, 0, Stream::kCompute);
  }
  const int64_t expert_params = stage_expert_params(s, ctx.layout, stage);
  out.state =
      model_state_bytes(s, scenario.training.optimizer, stage_params(s, ctx.layout, stage) - expert_params,
                        ctx.plan.group_size(ctx.grad_group));
  if (expert_params > 0) {
    const ModelStateBytes experts = model_state_bytes(s, scenario.training.optimizer, expert_params,
                                                      ctx.plan.group_size(s.expert_grad_group()));
    out.state.weights += experts.weights;
    out.state.gradients += experts.gradients;
    out.state.optimizer += experts.optimizer;
    out.state.optimizer_params += experts.optimizer_params;
  }
  const auto keep = [&](OpLabel label, MemoryCategory category, double bytes) {
    out.persistent.push_back(w.alloc(label, category, MemorySpace::kHbm, bytes, Stream::kCompute).buffer);
  };
  const auto linear_weights =
      static_cast<double>(stage_layer_sum(s, ctx.layout, stage, &LayerParams::linear_weights));
  if (s.fp8_params) {
    // FP8 primary weights: the linear layers' weights are the FP8 ones (1 byte each), sharded as the
    // others under ZeRO-3.
    const double shards = s.zero_stage >= 3 ? static_cast<double>(ctx.plan.group_size(ctx.grad_group)) : 1;
    out.state.weights -= (s.act_bytes - 1.0) * linear_weights / shards;
  }
  keep(OpLabel::kModelState, MemoryCategory::kWeights, out.state.weights);
  keep(OpLabel::kModelState, MemoryCategory::kGradients, out.state.gradients);
  keep(OpLabel::kModelState, MemoryCategory::kOptimizer, out.state.optimizer);
  if (s.fp8) {
    // Transformer Engine's fp8 copies of the linear layers' weights, kept across the iteration's
    // micro-batches: row- and column-wise (2 bytes per weight), cast from the bf16 weights once per
    // iteration; with FP8 weights only the column-wise transposes (1 byte), made from them.
    const double copies = s.fp8_params ? 1.0 : 2.0;
    keep(OpLabel::kModelState, MemoryCategory::kBuffers, copies * linear_weights);
    w.memory(OpLabel::kModelState, ((s.fp8_params ? 1.0 : s.act_bytes) + copies) * linear_weights);
  }
  if (s.zero_stage == 2) {
    // DeepSpeed's reduction bucket (ipg buffer).
    keep(OpLabel::kCommBuffer, MemoryCategory::kBuffers,
         std::min(bucket_bytes, static_cast<double>(stage_params(s, ctx.layout, stage)) * s.grad_bytes));
  }
  return out;
}

// The framework's device synchronisation before a forward step (Scenario::micro_batch_sync): the
// host waits for the step's input, the sends of the steps before it and every stream's work.
void device_sync(BuildContext& ctx, OpId input, std::vector<OpId>& unsynced_sends) {
  GraphWriter& w = ctx.w;
  for (const OpId sent : unsynced_sends) w.wait(Stream::kCompute, {sent});
  unsynced_sends.clear();
  w.host_sync(OpLabel::kStepSync, {input, w.last(Stream::kComm), w.last(Stream::kDpComm),
                                   w.last(Stream::kCopy), w.last(Stream::kCopyAux)});
}

// The pipeline schedule's steps. Gradients are reduced in the last backward (or W pass) of each
// model chunk (every one under ZeRO-2). An overlapped pair (DualPipe's forward_backward_chunk,
// Megatron-Core's combined_forward_backward_step) receives both passes' inputs, then runs the forward
// on lane 0 and the backward on lane 1; what follows the pair waits for both lanes.
void run_steps(BuildContext& ctx, const std::vector<PipelineStep>& steps, int64_t stage) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  std::vector<size_t> last_backward(s.vpp, 0);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].pass == Pass::kBackward || steps[i].pass == Pass::kWeightGrad) {
      last_backward[steps[i].chunk] = i;
    }
  }
  std::vector<OpId> unsynced_sends;  // the steps' pipeline sends since the last device sync
  const auto sent_by = [&](OpId sent) {
    if (s.micro_batch_sync && sent != kNoOp) unsynced_sends.push_back(sent);
  };
  StepInput pair_input;  // the backward's, received before the forward ran
  OpId pair_start = kNoOp;
  std::array<OpId, 2> pass_ends = {kNoOp, kNoOp};  // the last forward and backward steps' last compute
  for (size_t i = 0; i < steps.size(); ++i) {
    const PipelineStep& step = steps[i];
    if (step.pass == Pass::kForward && i + 1 < steps.size() && steps[i + 1].overlapped) {
      const StepInput in = receive_input(ctx, step, w.last(Stream::kCompute));
      const OpId posted = w.last(Stream::kCompute);
      w.set_lane(1);
      w.wait(Stream::kCompute, {posted});  // lane 1 posts its receive no earlier
      pair_input = receive_input(ctx, steps[i + 1], w.last(Stream::kCompute));
      w.set_lane(0);
      pair_start = w.wait(Stream::kCompute, {w.last(Stream::kComm), in.ready, pair_input.ready});
      sent_by(forward_step(ctx, step, in));
      continue;
    }
    StepInput in;
    if (step.overlapped) {
      w.set_lane(1);
      w.wait(Stream::kCompute, {pair_start, w.last(Stream::kComm)});
      in = pair_input;
    } else if (step.pass != Pass::kWeightGrad) {
      // Megatron-Core's overlap_p2p_comm: the receive was posted with the previous step of its pass.
      const OpId pass_end = pass_ends[step.pass == Pass::kForward ? 0 : 1];
      in = receive_input(ctx, step,
                         s.overlap_p2p_comm && pass_end != kNoOp ? pass_end : w.last(Stream::kCompute));
    }
    if (step.pass == Pass::kForward) {
      if (s.micro_batch_sync) device_sync(ctx, in.ready, unsynced_sends);
      sent_by(forward_step(ctx, step, in));
    } else if (step.pass == Pass::kInputGrad) {
      sent_by(backward_step(ctx, step, in));
    } else {
      const bool last = last_backward[step.chunk] == i;
      ctx.grads.begin_backward(s.zero_stage == 2 || last, last);
      if (ctx.expert_grads) ctx.expert_grads->begin_backward(s.zero_stage == 2 || last, last);
      if (step.pass == Pass::kBackward) {
        sent_by(backward_step(ctx, step, in));
      } else {
        weight_grad_pass(ctx, ctx.layout.virtual_stage(stage, step.chunk), step.micro_batch);
      }
      ctx.grads.end_backward();
      if (ctx.expert_grads) ctx.expert_grads->end_backward();
    }
    if (step.overlapped) {
      const OpId backward_done = w.wait(Stream::kCompute, {w.last(Stream::kComm)});
      w.set_lane(0);
      w.wait(Stream::kCompute, {backward_done, w.last(Stream::kComm)});
    } else if (step.pass != Pass::kWeightGrad) {
      pass_ends[step.pass == Pass::kForward ? 0 : 1] = w.last(Stream::kCompute);
    }
  }
}

// Optimizer: the gradient synchronisation that is left, the step, ZeRO-1/2's parameter all-gather.
void optimizer(BuildContext& ctx, const ModelStateBytes& state, int64_t stage) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  w.set_position({Phase::kOptimizer, -1, -1});
  ctx.grads.finish();
  if (ctx.expert_grads) ctx.expert_grads->finish();
  if (s.tied_embeddings && !s.head_beside_embedding() && (stage == 0 || stage == s.pp - 1)) {
    w.collective(OpLabel::kEmbeddingGradSync, CollectiveKind::kAllReduce, GroupKind::kEmbedding,
                 static_cast<double>(s.vocab_local) * s.hidden * s.grad_bytes, Stream::kDpComm,
                 {w.last(Stream::kCompute)});
  }
  if (s.megatron_sp) {
    w.collective(OpLabel::kTpComm, CollectiveKind::kAllReduce, GroupKind::kTp,
                 static_cast<double>(sequence_parallel_grad_elements(s, ctx.layout, stage)) * s.grad_bytes,
                 Stream::kComm, {w.last(Stream::kCompute)});
  }
  const OpId step =
      w.optimizer_step(state.optimizer_params, state.step_bytes_per_param, state.step_flops_per_param,
                       {w.last(Stream::kDpComm), w.last(Stream::kComm)});
  ctx.grads.gather_parameters(step);
  if (ctx.expert_grads) ctx.expert_grads->gather_parameters(step);
}

// Teardown: the setup's buffers released once the last gradient traffic is done, the runtime's
// memory sized by the communicators the graph uses.
void tear_down(BuildContext& ctx, Graph& graph, const Setup& setup) {
  GraphWriter& w = ctx.w;
  w.set_position({Phase::kTeardown, -1, -1});
  const OpId done = w.last(Stream::kDpComm);
  for (BufferId b : setup.persistent) w.release(b, Stream::kCompute, {done});
  if (setup.runtime) {
    const CommunicatorUse use = communicator_use(graph, ctx.plan, ctx.scenario.cluster.topology.node.gpus);
    w.resize(*setup.runtime, runtime_memory_bytes(use, *ctx.scenario.cluster.hardware.runtime_memory));
    w.release(setup.runtime->buffer, Stream::kCompute, {done});
  }
}

Graph build(const config::Scenario& scenario, const ParallelPlan& plan, const RankShapes& s,
            const StageLayout& layout, int64_t rank) {
  Graph graph;
  // Room for the largest graph built on this thread so far: a search or an estimate builds thousands
  // of graphs one after another, and growing each from empty cost a fifth of a search's screening in
  // copies and freshly faulted pages. What a smaller graph leaves unused is address space, never
  // touched. (A graph built after the one before it was destroyed starts on that one's storage
  // instead, pages and all: Graph's constructor; this covers graphs built while others are alive.)
  thread_local size_t most_ops = 0, most_edges = 0;
  graph.reserve(most_ops, most_edges);
  const Coords coords = plan.coords(rank);
  const int64_t stage = coords.pp();
  graph.info.rank = rank;
  graph.info.coords = coords;
  graph.info.symmetry_class = plan.class_of(rank);
  graph.info.micro_batches = s.micro_batches;
  GraphWriter w(graph, plan, rank, scenario.training.dtype);
  const GroupKind grad_group = s.grad_group();
  const std::vector<PipelineStep> steps =
      pipeline_schedule(scenario.parallelism.schedule, s.pp, stage, s.vpp, s.micro_batches,
                        scenario.parallelism.ep_comm_overlap);
  const double bucket_bytes = scenario.dp_bucket_bytes();
  const bool overlap = scenario.overlap_grad_reduce();
  GradientSync grads(w, s.zero_stage, grad_group, bucket_bytes, overlap, s.grad_bytes, s.act_bytes);
  // Expert weights have their own buckets, reduced over the expert-data-parallel group (Megatron's
  // expert gradient buffers).
  std::optional<GradientSync> expert_grads;
  if (s.experts > 0) {
    expert_grads.emplace(w, s.zero_stage, s.expert_grad_group(), bucket_bytes, overlap, s.grad_bytes,
                         s.act_bytes);
  }
  std::optional<ParamGatherer> zero3;
  if (s.zero_stage == 3) {
    zero3.emplace(w, grad_group, s.act_bytes, s.grad_bytes, zero3_uses(s, layout, stage, steps),
                  s.zero3_per_iteration(), s.zero3_reduce_bucket_elements);
  }
  BuildContext ctx{
      .scenario = scenario,
      .plan = plan,
      .rank = rank,
      .coords = coords,
      .shapes = s,
      .layout = layout,
      .params = layer_params(s),
      .act = layer_activation_bytes(s),
      .moe_params = s.experts > 0 ? layer_params(s, true) : LayerParams{},
      .moe_act = s.experts > 0 ? layer_activation_bytes(s, true) : LayerActivationBytes{},
      .w = w,
      .grads = grads,
      .expert_grads = expert_grads ? &*expert_grads : nullptr,
      .zero3 = zero3 ? &*zero3 : nullptr,
      .grad_group = grad_group,
      .attention_model_flops =
          2.0 * s.batch * s.attn_heads * static_cast<double>(s.scheme.exchanges_kv ? s.tokens : s.seq) *
          static_cast<double>(s.seq) * static_cast<double>(s.qk_head_dim() + s.v_head_dim),
  };

  const Setup setup = set_up(ctx, stage, bucket_bytes);
  run_steps(ctx, steps, stage);
  optimizer(ctx, setup.state, stage);
  tear_down(ctx, graph, setup);

  TRAINSIM_WORKLOAD_CHECK(ctx.saved.empty())
      << ctx.saved.size() << " layer states never consumed on rank " << rank;
  TRAINSIM_WORKLOAD_CHECK(ctx.turning.empty()) << "V turns never taken on rank " << rank;
  TRAINSIM_WORKLOAD_CHECK(ctx.held.empty()) << ctx.held.size() << " W passes never run on rank " << rank;
  TRAINSIM_WORKLOAD_CHECK(!zero3 || zero3->done()) << "ZeRO-3 parameter uses left on rank " << rank;
  TRAINSIM_WORKLOAD_CHECK(w.all_released()) << "buffers left allocated on rank " << rank;
  graph.info.buffers = w.buffer_count();
  most_ops = std::max(most_ops, graph.size());
  most_edges = std::max(most_edges, graph.edge_count());
  return graph;
}

}  // namespace

Graph build_rank_graph(const config::Scenario& scenario, const ParallelPlan& plan, int64_t rank) {
  const RankShapes shapes = derive_shapes(scenario, plan);
  const StageLayout layout = partition_layers(shapes);
  return build(scenario, plan, shapes, layout, rank);
}

std::vector<Graph> build_rank_graphs(const config::Scenario& scenario, const ParallelPlan& plan,
                                     const std::vector<int64_t>& ranks) {
  const RankShapes shapes = derive_shapes(scenario, plan);
  const StageLayout layout = partition_layers(shapes);
  std::vector<Graph> graphs;
  graphs.reserve(ranks.size());
  for (const int64_t rank : ranks) graphs.push_back(build(scenario, plan, shapes, layout, rank));
  return graphs;
}

std::vector<Graph> build_class_graphs(const config::Scenario& scenario, const ParallelPlan& plan) {
  std::vector<int64_t> representatives;
  for (const SymmetryClass& c : plan.symmetry_classes()) representatives.push_back(c.representative);
  return build_rank_graphs(scenario, plan, representatives);
}

}  // namespace trainsim::workload
