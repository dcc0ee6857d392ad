// The MLP of a mixture-of-experts layer as Megatron-LM's MoE layer runs it with the all-to-all token
// dispatcher (megatron/core/transformer/moe: router.py, token_dispatcher.py, experts.py), experts
// split over the etp ranks of an expert tensor-parallel group and spread over the ep ranks of an
// expert group.
//
// Forward, per rank holding Tn tokens (sequence-sharded under Megatron-SP):
//   router GEMM (Tn x hidden x experts), softmax and top-k; permute (each token's top_k copies,
//   grouped by expert); all-to-all over ep; all-gather over etp; sort by local expert; FC1, activation
//   and FC2 of the local experts as grouped GEMMs (expert_rows rows each); sort back; reduce-scatter
//   over etp; all-to-all over ep; unpermute (the probability-weighted sum of each token's copies); then
//   the shared experts as a dense TP MLP (after the routed ones: Megatron overlaps them with the
//   dispatch only with --moe-shared-expert-overlap).
// Backward runs the same in reverse: every collective's backward is its mirror (all-to-all, all-gather
// <-> reduce-scatter), every GEMM gives an input and a weight gradient, and the router's gradient
// comes from the unpermute (the probabilities' gradient) through the softmax.
// Buffers and GEMMs are sized for the busiest expert (capacity_factor times the balanced load),
// which every rank waits for at the all-to-alls; model FLOPs count only the routed tokens.
// With moe_host_sync the forward's host waits for the router's token counts before it issues the
// permutation and the dispatch (Scenario::moe_host_sync cites where each framework does): a GPU whose
// kernels are shorter than the host's dispatch then idles after every MoE layer's router. (Megatron-Core
// issues the first permutation before it waits, which hides up to that one kernel's time of it.)
#include <utility>

#include "sim/workload/context.h"

namespace trainsim::workload {
namespace {

double fc1_branches(const RankShapes& s) { return s.swiglu ? 2 : 1; }

// Rows of every local expert together, and their bytes at `width` columns.
double expert_bytes(const RankShapes& s, double width) {
  return static_cast<double>(s.act_bytes) * static_cast<double>(s.local_experts * s.expert_rows) * width;
}

OpId ep_all_to_all(BuildContext& ctx, OpId after) {
  return ctx.w.collective(OpLabel::kEpComm, CollectiveKind::kAllToAll, GroupKind::kEp,
                          ctx.shapes.dispatch_bytes(), Stream::kComm, {after});
}

// Grouping the tokens by local expert after the dispatch, or back before the combine (Megatron's
// sort_chunks_by_idxs): one pass over the expert input, only with more than one local expert.
void sort_by_expert(BuildContext& ctx, OpId after) {
  const RankShapes& s = ctx.shapes;
  if (s.local_experts > 1)
    ctx.w.memory(OpLabel::kPermute, 2 * expert_bytes(s, static_cast<double>(s.hidden)), {after});
}

// Router logits, softmax and top-k in fp32: the logits written and read, the probabilities written.
double router_pass_bytes(const RankShapes& s) {
  return 3 * 4.0 * static_cast<double>(s.batch * s.tokens_norm * s.experts);
}

// The expert tensor-parallel group's share of every local expert's tokens, gathered over it (kind
// kAllGather) or scattered back (kReduceScatter); `after` when etp == 1.
OpId expert_tp_collective(BuildContext& ctx, CollectiveKind kind, OpId after) {
  const RankShapes& s = ctx.shapes;
  if (s.etp == 1) return after;
  return ctx.w.collective(OpLabel::kTpComm, kind, GroupKind::kEtp,
                          expert_bytes(s, static_cast<double>(s.hidden)), Stream::kComm, {after});
}

// The tokens (or their gradients) arriving from the expert group: the all-to-all, the all-gather over
// etp and the sort by local expert. Returns the op the first expert GEMM waits for.
OpId arrive(BuildContext& ctx, OpId after) {
  const OpId ready = expert_tp_collective(ctx, CollectiveKind::kAllGather, ep_all_to_all(ctx, after));
  sort_by_expert(ctx, ready);
  return ready;
}

// The experts' output (or input gradients) leaving for the ranks that sent the tokens: the sort back,
// the reduce-scatter over etp and the all-to-all. Returns the ops the unpermute waits for.
std::pair<OpId, OpId> depart(BuildContext& ctx) {
  sort_by_expert(ctx, kNoOp);
  const OpId scattered =
      expert_tp_collective(ctx, CollectiveKind::kReduceScatter, ctx.w.last(Stream::kCompute));
  return {scattered, ep_all_to_all(ctx, scattered)};
}

}  // namespace

OpId moe_forward(BuildContext& ctx) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const int64_t tokens = s.batch * s.tokens_norm;
  const auto groups = static_cast<int32_t>(s.local_experts);
  const double useful = 1 / s.capacity_factor;
  const auto fc1_width = static_cast<int64_t>(static_cast<double>(s.expert_ffn_local) * fc1_branches(s));

  w.gemm(OpLabel::kRouter, GemmPass::kForward, tokens, s.experts, s.hidden);
  w.memory(OpLabel::kRouter, router_pass_bytes(s));
  // The dispatch's split sizes reach the host: it waits for the router, then issues the rest.
  if (s.moe_host_sync) w.host_sync(OpLabel::kRouter);
  w.memory(OpLabel::kPermute, s.hidden_norm_bytes() + s.dispatch_bytes());
  const OpId ready = arrive(ctx, w.last(Stream::kCompute));
  w.grouped_gemm(OpLabel::kExpertFc1, GemmPass::kForward, groups, s.expert_rows, fc1_width, s.hidden, useful,
                 {ready});
  w.memory(OpLabel::kActivation, expert_bytes(s, static_cast<double>(fc1_width + s.expert_ffn_local)));
  w.grouped_gemm(OpLabel::kExpertFc2, GemmPass::kForward, groups, s.expert_rows, s.hidden, s.expert_ffn_local,
                 useful);
  const auto [scattered, combined] = depart(ctx);
  w.memory(OpLabel::kPermute, s.dispatch_bytes() + s.hidden_norm_bytes(), {combined, scattered});
  if (s.shared_experts == 0) return w.last(Stream::kCompute);
  // The shared experts, added to the routed output.
  const OpId reduced = mlp_forward(ctx, s.shared_ffn_local);
  return w.memory(OpLabel::kResidual, 3 * s.hidden_norm_bytes(), {reduced});
}

OpId moe_backward(BuildContext& ctx, OpId grad_ready) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const LayerParams& p = ctx.moe_params;
  const int64_t tokens = s.batch * s.tokens_norm;
  const auto groups = static_cast<int32_t>(s.local_experts);
  const double useful = 1 / s.capacity_factor;
  const auto fc1_width = static_cast<int64_t>(static_cast<double>(s.expert_ffn_local) * fc1_branches(s));

  const OpId shared =
      s.shared_experts == 0
          ? kNoOp
          : mlp_backward(ctx, grad_ready, kNoOp, {s.shared_ffn_local, p.shared_fc1, p.shared_fc2, false});
  // Unpermute backward: the gradient of every expert output copy, and of the probabilities.
  w.memory(OpLabel::kPermute, s.hidden_norm_bytes() + 2 * s.dispatch_bytes(), {grad_ready});
  const OpId ready = arrive(ctx, w.last(Stream::kCompute));
  w.grouped_gemm(OpLabel::kExpertFc2, GemmPass::kInputGrad, groups, s.expert_rows, s.expert_ffn_local,
                 s.hidden, useful, {ready});
  expert_weight_grad_gemm(ctx, OpLabel::kExpertFc2, s.expert_ffn_local, s.hidden, s.expert_rows,
                          p.expert_fc2);
  w.memory(OpLabel::kActivation, expert_bytes(s, static_cast<double>(s.expert_ffn_local + 2 * fc1_width)));
  w.grouped_gemm(OpLabel::kExpertFc1, GemmPass::kInputGrad, groups, s.expert_rows, s.hidden, fc1_width,
                 useful);
  expert_weight_grad_gemm(ctx, OpLabel::kExpertFc1, fc1_width, s.hidden, s.expert_rows, p.expert_fc1);
  const auto [scattered, dispatched] = depart(ctx);
  // Permute backward: each token's copies summed back.
  w.memory(OpLabel::kPermute, s.dispatch_bytes() + s.hidden_norm_bytes(), {dispatched, scattered});
  // Router: softmax backward, then the gate GEMM's input and weight gradients; the router's input
  // gradient joins the experts' and the shared experts'.
  w.memory(OpLabel::kRouter, router_pass_bytes(s));
  w.gemm(OpLabel::kRouter, GemmPass::kInputGrad, tokens, s.hidden, s.experts);
  weight_grad_gemm(ctx, OpLabel::kRouter, s.experts, s.hidden, tokens, p.router);
  return w.memory(OpLabel::kResidual, 3 * s.hidden_norm_bytes(), {shared});
}

double moe_weight_grad_operands(const RankShapes& s) {
  const double e = s.act_bytes;
  const auto hidden = static_cast<double>(s.hidden);
  const double fc1_width = static_cast<double>(s.expert_ffn_local) * fc1_branches(s);
  const double tokens = static_cast<double>(s.batch * s.tokens_norm);
  const double rows = static_cast<double>(s.batch * s.tokens);
  const double shared_ffn = static_cast<double>(s.shared_ffn_local);
  return e * tokens * (hidden + static_cast<double>(s.experts))                                    // router
         + expert_bytes(s, hidden + static_cast<double>(s.expert_ffn_local) + fc1_width + hidden)  // experts
         + (s.shared_experts > 0 ? 2 * s.hidden_norm_bytes() + e * rows * shared_ffn * (1 + fc1_branches(s))
                                 : 0.0);
}

}  // namespace trainsim::workload
