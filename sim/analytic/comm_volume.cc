#include "sim/analytic/comm_volume.h"

#include <array>

#include "sim/workload/layout.h"
#include "sim/workload/plan.h"
#include "sim/workload/shapes.h"

namespace trainsim::analytic {
namespace {

using workload::CommKind;
using workload::GroupKind;

struct Collector {
  std::vector<ExpectedComm> entries;
  // Calls of one size from one source add up in one entry.
  void add(CommKind kind, GroupKind group, double calls, double bytes, const char* source) {
    if (calls <= 0 || bytes <= 0) return;
    for (ExpectedComm& x : entries) {
      if (x.kind == kind && x.group == group && x.bytes_per_call == bytes && x.source == source) {
        x.calls += calls;
        x.volume_bytes += calls * bytes * workload::volume_factor(kind);
        return;
      }
    }
    entries.push_back({kind, group, calls, bytes, calls * bytes * workload::volume_factor(kind), source});
  }
  void add_volume(CommKind kind, GroupKind group, double volume, const char* source) {
    if (volume <= 0) return;
    entries.push_back({kind, group, 0, 0, volume, source});
  }
  void add_p2p(GroupKind group, double calls, double bytes, const char* source) {
    add(CommKind::kSend, group, calls, bytes, source);
    add(CommKind::kRecv, group, calls, bytes, source);
  }
};

// What one pipeline stage's rank holds and runs, as every parallel dimension's traffic needs it.
struct StageView {
  const workload::ParallelPlan& plan;
  const workload::RankShapes& s;
  const workload::StageLayout& layout;
  int64_t stage = 0;
  double g = 0;  // micro-batches
  double e = 0;  // bytes of an activation element
  bool full = false;
  double recomputed = 0;  // 1 with full recompute: its forward runs twice
  double layers = 0;
  double moe_layers = 0;  // of `layers`
  bool embedding = false;
  bool head = false;

  // Bytes of one rank's b x tokens tokens of `width` elements each.
  double token_message(int64_t width) const { return e * static_cast<double>(s.batch * s.tokens * width); }
};

// Tensor parallelism. MLA with a query latent gathers (or reduces) the latents where the dense QKV
// GEMM gathers the hidden state: its attention block moves hidden states only around the output
// projection (workload/mla.cc).
void tensor_parallel(const StageView& v, Collector& c) {
  const workload::RankShapes& s = v.s;
  if (s.tp <= 1) return;
  const double g = v.g;
  const double layers = v.layers;
  const double recomputed = v.recomputed;
  const double ends = (v.embedding ? 1 : 0) + (v.head ? 1 : 0);
  const double tp_message = s.hidden_bytes();
  const bool latent_queries = s.mla() && s.q_lora_rank > 0;
  if (s.megatron_sp) {
    // Per layer and micro-batch: the attention block and a dense (or shared-expert) MLP each gather
    // 3 times and reduce-scatter twice (once more each with full recompute). An MLA block gathers
    // each latent twice (once more with full recompute) and reduce-scatters its gradient once.
    const double mlp_blocks = layers - (s.shared_experts > 0 ? 0 : v.moe_layers);
    const double attention_gathers = latent_queries ? 1 : 3 + recomputed;
    const double attention_scatters = latent_queries ? 1 + recomputed : 2 + recomputed;
    c.add(CommKind::kAllGather, GroupKind::kTp,
          g * (layers * attention_gathers + mlp_blocks * (3 + recomputed) + ends), tp_message, "layers");
    c.add(CommKind::kReduceScatter, GroupKind::kTp,
          g * (layers * attention_scatters + mlp_blocks * (2 + recomputed) + ends), tp_message, "layers");
    if (s.mla()) {
      for (const int64_t width : {s.kv_latent(), s.q_lora_rank}) {
        c.add(CommKind::kAllGather, GroupKind::kTp, g * layers * (2 + recomputed), v.token_message(width),
              "MLA latents");
        c.add(CommKind::kReduceScatter, GroupKind::kTp, g * layers, v.token_message(width), "MLA latents");
      }
    }
    const double norms = static_cast<double>(workload::stage_layer_sum(s, v.layout, v.stage,
                                                                       &workload::LayerParams::replicated)) +
                         (v.head ? static_cast<double>(workload::norm_params(s)) : 0.0);
    c.add(CommKind::kAllReduce, GroupKind::kTp, 1, norms * s.grad_bytes, "sequence-parallel norm gradients");
  } else {
    // Two all-reduces per block (one more with full recompute); an MLA block with a query latent
    // all-reduces the latents' gradients instead of the hidden state's.
    const double attention = latent_queries ? 1 + recomputed : 2 + recomputed;
    c.add(CommKind::kAllReduce, GroupKind::kTp, g * (layers * (attention + 2 + recomputed) + ends),
          tp_message, "layers");
    if (s.mla()) {
      for (const int64_t width : {s.kv_latent(), s.q_lora_rank}) {
        c.add(CommKind::kAllReduce, GroupKind::kTp, g * layers, v.token_message(width), "MLA latents");
      }
    }
  }
  if (v.head)
    c.add(CommKind::kAllReduce, GroupKind::kTp, 3 * g, 4.0 * s.batch * s.tokens,
          "vocab-parallel cross entropy");
}

// Expert tensor parallelism: the routed experts gather and reduce-scatter their tokens twice each
// per MoE layer and micro-batch (once more each with full recompute). Expert parallelism: each MoE
// layer dispatches and combines its tokens in the forward, and the backward mirrors both.
void expert_parallel(const StageView& v, Collector& c) {
  const workload::RankShapes& s = v.s;
  if (s.etp > 1) {
    const double experts_message = v.e * static_cast<double>(s.local_experts * s.expert_rows) * s.hidden;
    for (const CommKind kind : {CommKind::kAllGather, CommKind::kReduceScatter}) {
      c.add(kind, GroupKind::kEtp, v.g * v.moe_layers * (2 + v.recomputed), experts_message, "expert tokens");
    }
  }
  if (s.ep > 1) {
    c.add(CommKind::kAllToAll, GroupKind::kEp, v.g * v.moe_layers * (4 + 2 * v.recomputed),
          s.dispatch_bytes(), "expert tokens");
  }
}

// Sequence parallelism. Ulysses and FPDT move q, k, v and the output (or their gradients) once per
// pass; ring attention passes K and V around the ring (or gathers them).
void sequence_parallel(const StageView& v, Collector& c) {
  const workload::RankShapes& s = v.s;
  if (s.sp <= 1) return;
  const double g = v.g;
  const double layers = v.layers;
  const double e = v.e;
  const std::array<double, 4> qkvo_messages = {
      v.token_message(s.q_width()), v.token_message(s.a2a_kv_heads() * s.qk_head_dim()),
      v.token_message(s.a2a_kv_heads() * s.v_head_dim), v.token_message(s.attn_out_width())};
  const double passes = 2 + v.recomputed;  // forward, backward, recomputed forward
  if (s.scheme.heads_over_sp) {
    // FPDT moves each chunk's share of the messages chunk by chunk.
    const double u = s.scheme.chunked ? static_cast<double>(s.fpdt_chunks) : 1.0;
    for (const double message : qkvo_messages) {
      c.add(CommKind::kAllToAll, GroupKind::kSp, g * layers * u * passes, message / u, "layers");
    }
  } else if (s.scheme.exchanges_kv && s.cp_all_gather) {
    // K and V gathered in every forward (and recomputed forward) and again in the backward, their
    // gradients reduce-scattered: messages of the whole sequence's K (or V).
    for (const int64_t width : {s.qk_head_dim(), s.v_head_dim}) {
      const double message = e * static_cast<double>(s.batch * s.seq * s.attn_kv_heads * width);
      c.add(CommKind::kAllGather, GroupKind::kSp, g * layers * (v.full ? 3 : 2), message, "layers");
      c.add(CommKind::kReduceScatter, GroupKind::kSp, g * layers, message, "layers");
    }
  } else if (s.scheme.exchanges_kv) {
    const double p = static_cast<double>(s.sp);
    const double kv = e * static_cast<double>(s.batch * s.tokens * s.attn_kv_heads) *
                      static_cast<double>(s.qk_head_dim() + s.v_head_dim);
    c.add_p2p(GroupKind::kSp, g * layers * (p - 1) * (v.full ? 2 : 1), kv, "ring attention forward");
    c.add_p2p(GroupKind::kSp, g * layers * 2, kv, "ring attention backward");
    c.add_p2p(GroupKind::kSp, g * layers * (p - 2), 2 * kv, "ring attention backward");
  }
  if (v.head && s.scheme.gathers_token_losses) {
    c.add(CommKind::kAllGather, GroupKind::kSp, g, 4.0 * s.batch * s.seq, "loss");
  } else if (v.head) {
    c.add(CommKind::kAllReduce, GroupKind::kSp, g, 8, "loss");
  }
  if (s.scheme.chunked && s.fpdt_offload && v.plan.world_size() > 1) {
    const double u = static_cast<double>(s.fpdt_chunks);
    c.add(CommKind::kBarrier, GroupKind::kWorld, g * layers * (u * (v.full ? 2 : 1) + 2 * u - 1), 4,
          "FPDT barriers");
  }
}

// Pipeline parallelism: activations forward and gradients back at every chunk boundary, and the tied
// embedding's gradient between the first and last stage.
void pipeline_parallel(const StageView& v, Collector& c) {
  const workload::RankShapes& s = v.s;
  if (s.pp <= 1) return;
  // Megatron's scatter/gather (Narayanan et al. 2021, section 4.1): without Megatron-SP each TP rank
  // sends 1/t of the boundary tensor and the receivers all-gather it.
  const bool scatter_gather = s.tp > 1 && !s.megatron_sp;
  const double message = s.hidden_norm_bytes() / (scatter_gather ? static_cast<double>(s.tp) : 1.0);
  const double vpp = static_cast<double>(s.vpp);
  const double head = v.head ? 1 : 0;
  const double embedding = v.embedding ? 1 : 0;
  // A V turns on the last stage, which hands its first chunk's output to its second locally.
  const double turn = s.v_shape && v.stage == s.pp - 1 ? 1 : 0;
  c.add_p2p(GroupKind::kPp, v.g * (vpp - head - turn), message, "pipeline activations");
  c.add_p2p(GroupKind::kPp, v.g * (vpp - embedding - turn), message, "pipeline gradients");
  if (scatter_gather) {
    c.add(CommKind::kAllGather, GroupKind::kTp, v.g * (2 * vpp - head - embedding - 2 * turn),
          s.hidden_norm_bytes(), "pipeline scatter/gather");
  }
  if (s.tied_embeddings && !s.head_beside_embedding() && (v.stage == 0 || v.stage == s.pp - 1)) {
    c.add(CommKind::kAllReduce, GroupKind::kEmbedding, 1,
          static_cast<double>(s.vocab_local) * s.hidden * s.grad_bytes, "tied embedding");
  }
}

// Data parallelism and ZeRO; expert weights over their expert-data-parallel group.
void data_parallel(const StageView& v, Collector& c) {
  const workload::RankShapes& s = v.s;
  const GroupKind dp = s.grad_group();
  const GroupKind edp = s.expert_grad_group();
  const auto expert_params = static_cast<double>(workload::stage_expert_params(s, v.layout, v.stage));
  if (expert_params > 0 && v.plan.group_size(edp) > 1) {
    if (s.zero_stage == 0) {
      c.add_volume(CommKind::kAllReduce, edp, 2 * expert_params * s.grad_bytes, "expert data-parallel");
    } else {
      c.add_volume(CommKind::kReduceScatter, edp,
                   (s.zero_stage == 2 ? v.g : 1) * expert_params * s.grad_bytes, "expert data-parallel");
      c.add_volume(CommKind::kAllGather, edp, expert_params * v.e, "expert data-parallel");
    }
  }
  if (v.plan.group_size(dp) <= 1) return;
  const double params = static_cast<double>(workload::stage_params(s, v.layout, v.stage)) - expert_params;
  switch (s.zero_stage) {
    case 0:
      c.add_volume(CommKind::kAllReduce, dp, 2 * params * s.grad_bytes, "data-parallel");
      break;
    case 1:
    case 2:
      c.add_volume(CommKind::kReduceScatter, dp, (s.zero_stage == 2 ? v.g : 1) * params * s.grad_bytes,
                   "data-parallel");
      c.add_volume(CommKind::kAllGather, dp, params * v.e, "data-parallel");
      break;
    case 3: {
      const bool regather = s.tied_embeddings && s.pp == 1;  // the LM head gathers the embedding again
      const double gathered = params + (regather ? static_cast<double>(s.vocab_local) * s.hidden : 0.0) -
                              static_cast<double>(workload::zero3_persistent_params(s, v.layout, v.stage));
      // Gathers per iteration (zero3.h): once under pipelining, else per micro-batch for the forward
      // and, when resharded after it, again for the backward; gradients reduced once or per micro-batch.
      const double gathers = s.zero3_per_iteration() ? 1 : (s.reshard_after_forward ? 2 : 1) * v.g;
      const double reductions = s.zero3_per_iteration() ? 1 : v.g;
      c.add_volume(CommKind::kAllGather, dp, gathers * gathered * v.e, "ZeRO-3");
      c.add_volume(CommKind::kReduceScatter, dp, reductions * params * s.grad_bytes, "ZeRO-3");
      break;
    }
    default:  // the scenario's rules keep zero_stage within 0..3
      break;
  }
}

}  // namespace

std::vector<ExpectedComm> expected_comm(const config::Scenario& scenario, int64_t stage) {
  const workload::ParallelPlan plan = workload::make_plan(scenario);
  const workload::RankShapes s = workload::derive_shapes(scenario, plan);
  const workload::StageLayout layout = workload::partition_layers(s);
  StageView v{.plan = plan,
              .s = s,
              .layout = layout,
              .stage = stage,
              .g = static_cast<double>(s.micro_batches),
              .e = static_cast<double>(s.act_bytes),
              .full = s.recompute == config::Recompute::kFull};
  v.recomputed = v.full ? 1 : 0;
  for (int64_t chunk = 0; chunk < s.vpp; ++chunk) {
    const int64_t virtual_stage = layout.virtual_stage(stage, chunk);
    v.layers += static_cast<double>(layout.layer_count[virtual_stage]);
    v.moe_layers += static_cast<double>(workload::moe_layer_count(s, layout, virtual_stage));
    v.embedding = v.embedding || layout.has_embedding(virtual_stage);
    v.head = v.head || layout.has_head(virtual_stage);
  }
  Collector c;
  tensor_parallel(v, c);
  expert_parallel(v, c);
  sequence_parallel(v, c);
  pipeline_parallel(v, c);
  data_parallel(v, c);
  return c.entries;
}

double dp_allreduce_volume(double params, double bytes_per_element) { return 2 * params * bytes_per_element; }

double zero3_volume(double params, double bytes_per_element) { return 3 * params * bytes_per_element; }

double tp_layer_wire_volume(double b, double s, double h, double t, double e) {
  return 8 * b * s * h * (t - 1) / t * e;
}

double ulysses_layer_forward_volume(double b, double s, double h, double p, double e) {
  return 4 * b * s * h / p * e;
}

}  // namespace trainsim::analytic
