#include "sim/analytic/memory.h"

#include <algorithm>

#include "sim/workload/model_state.h"

namespace trainsim::analytic {

double korthikanti_layer_activation_bytes(ActivationConfig config, double s, double b, double h, double a,
                                          double t) {
  const double sbh = s * b * h;
  const double core = 5 * a * s / h;
  switch (config) {
    case ActivationConfig::kNoParallelism:
      return sbh * (34 + core);
    case ActivationConfig::kTensorParallel:
      return sbh * (10 + 24 / t + core / t);
    case ActivationConfig::kTensorSequenceParallel:
      return sbh * (34 / t + core / t);
    case ActivationConfig::kTensorParallelSelective:
      return sbh * (10 + 24 / t);
    case ActivationConfig::kTensorSequenceParallelSelective:
      return sbh * 34 / t;
    case ActivationConfig::kFullRecompute:
      return sbh * 2;
  }
  return 0;
}

bool korthikanti_config(const config::Scenario& scenario, ActivationConfig* out) {
  const config::Model& m = scenario.model;
  const config::Parallelism& p = scenario.parallelism;
  const bool gpt = m.position_embedding == config::PositionEmbedding::kLearned &&
                   m.activation == config::Activation::kGelu && m.kv_heads == m.heads &&
                   m.ffn_hidden == 4 * m.hidden && m.heads * m.head_dim == m.hidden;
  const config::SequenceScheme scheme = config::sequence_scheme(p.sequence_parallel);
  if (!gpt || scheme.sp_group) return false;
  const bool sp = scheme.shards_over_tp && p.tp > 1;
  switch (p.recompute) {
    case config::Recompute::kFull:
      if (sp) return false;  // Table 2 lists full recompute without SP only
      *out = ActivationConfig::kFullRecompute;
      return true;
    case config::Recompute::kSelective:
      *out = sp ? ActivationConfig::kTensorSequenceParallelSelective
                : ActivationConfig::kTensorParallelSelective;
      return true;
    case config::Recompute::kNone:
      *out = sp ? ActivationConfig::kTensorSequenceParallel
                : (p.tp > 1 ? ActivationConfig::kTensorParallel : ActivationConfig::kNoParallelism);
      return true;
  }
  return false;
}

double korthikanti_first_stage_activation_bytes(double layer_bytes, int64_t layers, int64_t pp, int64_t vpp,
                                                int64_t micro_batches, config::Schedule schedule) {
  const double l = static_cast<double>(layers), p = static_cast<double>(pp), v = static_cast<double>(vpp);
  switch (schedule) {
    case config::Schedule::kGpipe:
      return layer_bytes * l / p * static_cast<double>(micro_batches);
    case config::Schedule::kOneFOneB:
    case config::Schedule::kZeroBubble:
    case config::Schedule::kZbV:
      return layer_bytes * l / p * std::min<double>(p, static_cast<double>(micro_batches));
    case config::Schedule::kDualPipeV:  // 2p + 1 chunks of half a stage in flight, one more than ZB-V
      return layer_bytes * l / p * std::min<double>(p + 0.5, static_cast<double>(micro_batches));
    case config::Schedule::kInterleaved:
      return layer_bytes * l * (1 + (p - 1) / (p * v));
  }
  return 0;
}

ZeroModelState stage_model_state(const workload::RankShapes& s, const workload::StageLayout& layout,
                                 const workload::ParallelPlan& plan, int64_t stage,
                                 config::Optimizer optimizer) {
  const auto state = [&](int64_t params, workload::GroupKind group) {
    const workload::ModelStateBytes m =
        workload::model_state_bytes(s, optimizer, params, plan.group_size(group));
    return ZeroModelState{m.weights, m.gradients, m.optimizer};
  };
  const int64_t experts = workload::stage_expert_params(s, layout, stage);
  const int64_t dense_params = workload::stage_params(s, layout, stage) - experts;
  ZeroModelState dense = state(dense_params, s.grad_group());
  const ZeroModelState expert = state(experts, s.expert_grad_group());
  if (s.zero3_per_iteration()) {
    // Under pipelining every unit stays gathered, and its gradients accumulate unsharded, until the
    // chunk's last backward (zero3.h): a whole copy of the stage's weights and gradients besides the shards.
    dense.weights += static_cast<double>(s.act_bytes) * static_cast<double>(dense_params);
    dense.gradients += static_cast<double>(s.grad_bytes) * static_cast<double>(dense_params);
  }
  return {dense.weights + expert.weights, dense.gradients + expert.gradients,
          dense.optimizer + expert.optimizer};
}

FpdtMemory fpdt_memory(const config::Scenario& scenario) {
  const config::Model& m = scenario.model;
  const config::Parallelism& p = scenario.parallelism;
  const double e = config::dtype_bytes(scenario.training.dtype);
  const double b = static_cast<double>(scenario.training.micro_batch);
  const double sp = static_cast<double>(p.sp);
  const double c = static_cast<double>(p.fpdt.chunk_tokens);
  const double s = static_cast<double>(m.seq_len);
  const double d = static_cast<double>(m.head_dim), h = static_cast<double>(m.hidden);
  // K/V heads after the all-to-all: repeated up to one per rank when there are fewer than sp.
  const double kv_heads = std::max(static_cast<double>(m.kv_heads), sp);
  const double heads = static_cast<double>(m.heads) / sp, kv = kv_heads / sp;
  FpdtMemory f;
  f.chunks = m.seq_len / p.fpdt.chunk_tokens;
  f.q_chunk_bytes = b * c * heads * d * e;
  f.kv_chunk_bytes = b * c * kv * d * e;
  f.out_accumulator_bytes = b * c * heads * d * 4;
  f.x_chunk_bytes = b * (c / sp) * h * e;
  f.sequence_tensor_bytes = b * (s / sp) * h * e;
  const double u = static_cast<double>(f.chunks);
  f.host_per_live_layer_bytes =
      b * (s / sp) * (h + 2 * static_cast<double>(m.heads) * d + 2 * kv_heads * d) * e  // x, q, o, k, v
      + b * heads * s * 4                                                               // lse
      + (u - 1) / u * b * s * heads * d * 4;                                            // dq of chunks 1..u-1
  f.host_checkpoint_bytes = p.cpu_checkpointing ? static_cast<double>(m.layers) * f.sequence_tensor_bytes : 0;
  return f;
}

}  // namespace trainsim::analytic
