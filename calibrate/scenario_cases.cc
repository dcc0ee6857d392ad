#include "calibrate/scenario_cases.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace trainsim::calibrate {
namespace {

using config::SequenceParallel;

int64_t tokens_per_gemm(const config::Scenario& s) {
  const config::Parallelism& p = s.parallelism;
  const int64_t sequence =
      p.sequence_parallel == SequenceParallel::kFpdt ? p.fpdt.chunk_tokens : s.model.seq_len;
  return std::max<int64_t>(1, s.training.micro_batch * sequence / std::max<int64_t>(1, p.sp));
}

}  // namespace

std::vector<GemmCase> scenario_gemms(const config::Scenario& s) {
  const config::Model& m = s.model;
  const int64_t tp = std::max<int64_t>(1, s.parallelism.tp);
  const int64_t t = tokens_per_gemm(s);
  const int64_t qkv = (m.heads + 2 * m.kv_heads) * m.head_dim / tp;
  const int64_t attention_out = m.heads * m.head_dim / tp;
  const int64_t up = m.ffn_hidden * (m.activation == config::Activation::kSwiglu ? 2 : 1) / tp;
  const int64_t down = m.ffn_hidden / tp;
  const int64_t logits = m.vocab / tp;
  // (in, out) of each weight W[out, in].
  const std::vector<std::pair<int64_t, int64_t>> layers = {
      {m.hidden, qkv}, {attention_out, m.hidden}, {m.hidden, up}, {down, m.hidden}, {m.hidden, logits}};
  std::vector<GemmCase> out;
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  const auto add = [&](int64_t rows, int64_t cols, int64_t inner) {
    if (rows < 1 || cols < 1 || inner < 1 || !seen.insert({rows, cols, inner}).second) return;
    out.push_back({s.training.dtype, rows, cols, inner});
  };
  for (const auto& [in, o] : layers) {
    add(t, o, in);  // forward       Y = X·Wᵀ
    add(t, in, o);  // input grad    dX = dY·W
    add(o, in, t);  // weight grad   dW = dYᵀ·X
  }
  return out;
}

std::vector<AttentionCase> scenario_attentions(const config::Scenario& s) {
  const config::Model& m = s.model;
  const config::Parallelism& p = s.parallelism;
  const int64_t split = std::max<int64_t>(1, p.tp) * (p.sequence_parallel == SequenceParallel::kUlysses ||
                                                              p.sequence_parallel == SequenceParallel::kFpdt
                                                          ? std::max<int64_t>(1, p.sp)
                                                          : 1);
  const int64_t heads = std::max<int64_t>(1, m.heads / split);
  const int64_t kv_heads = std::max<int64_t>(1, m.kv_heads / split);
  std::vector<std::pair<int64_t, bool>> blocks;  // (length, causal)
  switch (p.sequence_parallel) {
    case SequenceParallel::kFpdt:
      blocks = {{p.fpdt.chunk_tokens, true}, {p.fpdt.chunk_tokens, false}};
      break;
    case SequenceParallel::kRing: {
      const int64_t shard = m.seq_len / std::max<int64_t>(1, p.sp);
      blocks = {{shard, true}, {shard, false}};
      break;
    }
    default:
      blocks = {{m.seq_len, true}};
  }
  std::vector<AttentionCase> out;
  for (const auto& [length, causal] : blocks) {
    for (const config::AttentionPass pass :
         {config::AttentionPass::kForward, config::AttentionPass::kBackward}) {
      out.push_back({pass, causal, s.training.dtype, s.training.micro_batch, heads, kv_heads, length, length,
                     m.head_dim});
    }
  }
  return out;
}

}  // namespace trainsim::calibrate
