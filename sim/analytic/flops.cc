#include "sim/analytic/flops.h"

#include "sim/analytic/params.h"

namespace trainsim::analytic {

IterationFlops iteration_flops(const config::Scenario& scenario) {
  const config::Model& m = scenario.model;
  const double b = static_cast<double>(scenario.training.global_batch);
  const double s = static_cast<double>(m.seq_len), h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  const double heads = static_cast<double>(m.heads);
  const double branches = m.activation == config::Activation::kSwiglu ? 2 : 1;
  const double fc1 = f * branches;
  const auto projections = static_cast<double>(attention_matmul_params(m));
  const double linear = projections + h * fc1 + f * h;
  // QK^T over query/key heads (head_dim + rope) and PV over value heads (d_v): 2*s^2*heads*(d_qk + d_v).
  const double attention = 2 * s * s * heads * static_cast<double>(m.qk_head_dim() + m.value_head_dim());
  // An MoE layer's matmuls: the router, and the MLPs of the top_k routed and the shared experts.
  double moe_layers = 0;
  double moe_linear = 0;
  if (m.moe.enabled()) {
    const auto fe = static_cast<double>(m.moe.expert_ffn_hidden);
    moe_layers = static_cast<double>(m.layers - m.moe.dense_layers);
    moe_linear = projections + h * static_cast<double>(m.moe.experts) +
                 static_cast<double>(m.moe.top_k + m.moe.shared_experts) * (h * fe * branches + fe * h);
  }
  const double dense_layers = static_cast<double>(m.layers) - moe_layers;
  IterationFlops r;
  r.forward_attention = b * static_cast<double>(m.layers) * attention;
  r.forward_layers = b * 2 * s * (dense_layers * linear + moe_layers * moe_linear) + r.forward_attention;
  r.forward_logits = b * 2 * s * h * static_cast<double>(m.vocab);
  r.model = 3 * (r.forward_layers + r.forward_logits);
  r.hardware = r.model;
  const config::Parallelism& p = scenario.parallelism;
  const config::SequenceScheme scheme = config::sequence_scheme(p.sequence_parallel);
  if (p.recompute == config::Recompute::kFull) {
    r.hardware += r.forward_layers;
  } else if (p.recompute == config::Recompute::kSelective) {
    // Only Megatron's unfused core attention has anything to recompute (see workload/shapes.h).
    const bool unfused = m.position_embedding == config::PositionEmbedding::kLearned && !scheme.sp_group;
    if (unfused) r.hardware += b * static_cast<double>(m.layers) * attention;
  }
  if (scheme.chunked) r.hardware += b * dense_layers * 2 * s * h * fc1 + r.forward_logits;
  return r;
}

namespace {
struct Gpt {
  double b, s, l, h, v;
};
Gpt gpt(const config::Model& m, double batch) {
  return {batch, static_cast<double>(m.seq_len), static_cast<double>(m.layers), static_cast<double>(m.hidden),
          static_cast<double>(m.vocab)};
}
}  // namespace

double narayanan_flops(const config::Model& m, double global_batch) {
  const Gpt g = gpt(m, global_batch);
  return 96 * g.b * g.s * g.l * g.h * g.h * (1 + g.s / (6 * g.h) + g.v / (16 * g.l * g.h));
}

double korthikanti_model_flops(const config::Model& m, double global_batch) {
  const Gpt g = gpt(m, global_batch);
  return 72 * g.b * g.l * g.s * g.h * g.h * (1 + g.s / (6 * g.h) + g.v / (12 * g.h * g.l));
}

double korthikanti_selective_hardware_flops(const config::Model& m, double global_batch) {
  const Gpt g = gpt(m, global_batch);
  return 72 * g.b * g.l * g.s * g.h * g.h * (1 + g.s / (3 * g.h) + g.v / (12 * g.h * g.l));
}

}  // namespace trainsim::analytic
