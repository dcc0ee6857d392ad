// Multi-head latent attention's projections (DeepSeek-V2, arXiv 2405.04434, Sec. 2.1) as
// Megatron-Core's MLASelfAttention runs them with its default Transformer Engine layers.
//
// Forward, from the input norm's output: the query down projection (hidden -> q_lora) and the
// key/value down projection (hidden -> kv_lora + the shared rotary key) are duplicated linears (the
// same weights on every TP rank) applied to the rank's own tokens: its sequence shard under
// Megatron-SP, every token otherwise (each TP rank then computes the same latents). The latents are
// normalised (RMSNorm); under SP each is all-gathered over TP in front of its up projection. The up
// projections (q_lora -> heads x (d + r), kv_lora -> heads x (d + d_v)) are column-parallel over
// the heads. RoPE runs over the queries' rotary parts and the shared key, and the key is assembled per
// head. Without a query latent (DeepSeek-V2-Lite) the queries come from a column-parallel projection
// of the hidden state, gathered under SP as the dense QKV's input is.
//
// Backward mirrors it: RoPE, each up projection's input gradient (reduced over TP: reduce-scatter
// under SP, all-reduce otherwise, since every TP rank holds part of the heads), its weight gradient
// (under SP on the latent gathered again), the norms, and the down projections' input and weight
// gradients. The down projections' and norms' weights are replicated over TP; under SP their
// gradients join the sequence-parallel all-reduce (LayerParams::replicated; the latents' norms
// report their gradients with the layer's norms).
#include "sim/workload/context.h"

namespace trainsim::workload {
namespace {

struct MlaSizes {
  int64_t rows = 0;        // tokens of the up projections: b x tokens
  int64_t rows_shard = 0;  // tokens of the down projections: b x tokens_norm
  double duplicated = 1;   // the share of a down projection's FLOPs that is model FLOPs (1/tp without SP)
  double rope_bytes = 0;   // one RoPE pass: read and write the queries; read the up projection's
                           // output and the shared key, write K and V
};

MlaSizes sizes(const RankShapes& s) {
  MlaSizes z;
  z.rows = s.batch * s.tokens;
  z.rows_shard = s.batch * s.tokens_norm;
  z.duplicated = s.megatron_sp ? 1.0 : 1.0 / static_cast<double>(s.tp);
  z.rope_bytes = static_cast<double>(s.act_bytes) * static_cast<double>(z.rows) *
                 static_cast<double>(2 * s.q_width() + s.kv_up_width() + s.rope_head_dim + s.kv_width());
  return z;
}

// Bytes of a latent of `width` per token: what its TP collectives move (the reduction of its input
// gradient, to which each rank's heads contribute part; its all-gather under Megatron-SP).
double latent_bytes(const RankShapes& s, int64_t width) {
  return static_cast<double>(s.act_bytes) * static_cast<double>(s.batch * s.tokens * width);
}

// All-gather of a latent of `width` per token over TP under Megatron-SP (kNoOp otherwise).
OpId latent_gather(BuildContext& ctx, OpId after, int64_t width) {
  return tp_gather(ctx, after, latent_bytes(ctx.shapes, width));
}

}  // namespace

void mla_forward(BuildContext& ctx) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const MlaSizes z = sizes(s);
  const double e = s.act_bytes;
  const OpId normed = w.last(Stream::kCompute);
  OpId query_input = kNoOp;
  if (s.q_lora_rank > 0) {
    w.grouped_gemm(OpLabel::kLatent, GemmPass::kForward, 1, z.rows_shard, s.q_lora_rank, s.hidden,
                   z.duplicated);
    w.memory(OpLabel::kNorm, 2 * e * static_cast<double>(z.rows_shard * s.q_lora_rank));
    query_input = latent_gather(ctx, w.last(Stream::kCompute), s.q_lora_rank);
  } else {
    query_input = tp_gather(ctx, normed);
  }
  w.grouped_gemm(OpLabel::kLatent, GemmPass::kForward, 1, z.rows_shard, s.kv_latent(), s.hidden,
                 z.duplicated);
  w.memory(OpLabel::kNorm, 2 * e * static_cast<double>(z.rows_shard * s.kv_lora_rank));
  const OpId kv_input = latent_gather(ctx, w.last(Stream::kCompute), s.kv_latent());
  w.gemm(OpLabel::kQkv, GemmPass::kForward, z.rows, s.q_width(), s.query_input(), {query_input});
  w.gemm(OpLabel::kQkv, GemmPass::kForward, z.rows, s.kv_up_width(), s.kv_lora_rank, {kv_input});
  w.memory(OpLabel::kRope, z.rope_bytes);
}

OpId mla_backward(BuildContext& ctx, OpId core_done, const LayerParams& p) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const MlaSizes z = sizes(s);
  const double e = s.act_bytes;
  w.memory(OpLabel::kRope, z.rope_bytes, {core_done});
  // Key/value up projection.
  const OpId kv_input = latent_gather(ctx, w.last(Stream::kCompute), s.kv_latent());
  w.gemm(OpLabel::kQkv, GemmPass::kInputGrad, z.rows, s.kv_lora_rank, s.kv_up_width());
  const int64_t kv_up_elements = s.kv_lora_rank * s.kv_up_width();
  const OpId kv_reduced = reduce_input_grad(ctx, latent_bytes(s, s.kv_latent()), [&] {
    weight_grad_gemm(ctx, OpLabel::kQkv, s.kv_up_width(), s.kv_lora_rank, z.rows, kv_up_elements, kv_input);
  });
  // Query up projection (or the query projection of the hidden state).
  const OpId q_input = s.q_lora_rank > 0 ? latent_gather(ctx, w.last(Stream::kCompute), s.q_lora_rank)
                                         : tp_gather(ctx, w.last(Stream::kCompute));
  w.gemm(OpLabel::kQkv, GemmPass::kInputGrad, z.rows, s.query_input(), s.q_width());
  const OpId q_reduced =
      reduce_input_grad(ctx, s.q_lora_rank > 0 ? latent_bytes(s, s.q_lora_rank) : s.hidden_bytes(), [&] {
        weight_grad_gemm(ctx, OpLabel::kQkv, s.q_width(), s.query_input(), z.rows,
                         p.qkv_weight - kv_up_elements, q_input);
      });
  // The latents' norms and the down projections, on the rank's own tokens.
  w.memory(OpLabel::kNorm, 3 * e * static_cast<double>(z.rows_shard * s.kv_lora_rank), {kv_reduced});
  w.grouped_gemm(OpLabel::kLatent, GemmPass::kInputGrad, 1, z.rows_shard, s.hidden, s.kv_latent(),
                 z.duplicated);
  weight_grad_gemm(ctx, OpLabel::kLatent, s.kv_latent(), s.hidden, z.rows_shard, s.hidden * s.kv_latent(),
                   kNoOp, z.duplicated);
  if (s.q_lora_rank > 0) {
    w.memory(OpLabel::kNorm, 3 * e * static_cast<double>(z.rows_shard * s.q_lora_rank), {q_reduced});
    w.grouped_gemm(OpLabel::kLatent, GemmPass::kInputGrad, 1, z.rows_shard, s.hidden, s.q_lora_rank,
                   z.duplicated);
    weight_grad_gemm(ctx, OpLabel::kLatent, s.q_lora_rank, s.hidden, z.rows_shard, s.hidden * s.q_lora_rank,
                     kNoOp, z.duplicated);
    return w.last(Stream::kCompute);
  }
  return q_reduced;
}

double mla_weight_grad_operands(const RankShapes& s) {
  const MlaSizes z = sizes(s);
  const double e = s.act_bytes;
  const auto latents = static_cast<double>(z.rows_shard * (s.q_lora_rank + s.kv_latent()));
  // The down projections' input (the norm's output, also the query projection's without a query
  // latent) and their outputs' gradients (latents); the up projections' inputs (the latents,
  // sequence-sharded) and output gradients.
  return s.hidden_norm_bytes() + e * 2 * latents +
         e * static_cast<double>(z.rows) * static_cast<double>(s.q_width() + s.kv_up_width());
}

}  // namespace trainsim::workload
