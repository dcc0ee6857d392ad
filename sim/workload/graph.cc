#include "sim/workload/graph.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/workload/errors.h"

namespace trainsim::workload {

namespace {

// The storage Graph's constructor takes and its destructor gives back.
struct GraphStorage {
  std::vector<Op> ops;
  std::vector<uint32_t> pred_offsets;
  std::vector<OpId> preds;
};
thread_local GraphStorage spare;

}  // namespace

Graph::Graph() {
  ops_ = std::move(spare.ops);
  pred_offsets_ = std::move(spare.pred_offsets);
  preds_ = std::move(spare.preds);
  ops_.clear();
  pred_offsets_.assign(1, 0);
  preds_.clear();
}

Graph::~Graph() {
  if (ops_.capacity() <= spare.ops.capacity()) return;
  spare.ops = std::move(ops_);
  spare.pred_offsets = std::move(pred_offsets_);
  spare.preds = std::move(preds_);
}

OpId Graph::add(const Op& op, std::span<const OpId> predecessors) {
  const OpId id = static_cast<OpId>(ops_.size());
  TRAINSIM_WORKLOAD_CHECK(ops_.size() < kNoOp) << "graph exceeds " << kNoOp << " ops";
  const size_t first = preds_.size();
  for (OpId pred : predecessors) {
    TRAINSIM_WORKLOAD_CHECK(pred < id)
        << "op " << id << " (" << op_name(op) << ") depends on op " << pred << " which does not exist yet";
    preds_.push_back(pred);
  }
  std::sort(preds_.begin() + static_cast<std::ptrdiff_t>(first), preds_.end());
  preds_.erase(std::unique(preds_.begin() + static_cast<std::ptrdiff_t>(first), preds_.end()), preds_.end());
  ops_.push_back(op);
  pred_offsets_.push_back(static_cast<uint32_t>(preds_.size()));
  return id;
}

void Graph::resize_allocation(OpId id, double bytes) {
  TRAINSIM_WORKLOAD_CHECK(id < ops_.size() && ops_[id].kind == OpKind::kAlloc && bytes >= 0)
      << "resize of op " << id << " to " << bytes << " bytes";
  ops_[id].bytes = bytes;
}

std::span<const OpId> Graph::predecessors(OpId id) const {
  return {preds_.data() + pred_offsets_[id], preds_.data() + pred_offsets_[id + 1]};
}

Graph::Successors Graph::successors() const {
  Successors s;
  s.offsets.assign(ops_.size() + 1, 0);
  for (OpId pred : preds_) ++s.offsets[pred + 1];
  for (size_t i = 1; i < s.offsets.size(); ++i) s.offsets[i] += s.offsets[i - 1];
  s.ids.resize(preds_.size());
  std::vector<uint32_t> fill(s.offsets.begin(), s.offsets.end() - 1);
  for (OpId id = 0; id < ops_.size(); ++id) {
    for (OpId pred : predecessors(id)) s.ids[fill[pred]++] = id;
  }
  return s;
}

void Graph::reserve(size_t ops, size_t edges) {
  ops_.reserve(ops);
  pred_offsets_.reserve(ops + 1);
  preds_.reserve(edges);
}

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::kGemm:
      return "gemm";
    case OpKind::kAttentionForward:
      return "attention_fwd";
    case OpKind::kAttentionBackward:
      return "attention_bwd";
    case OpKind::kMemory:
      return "memory";
    case OpKind::kOptimizerStep:
      return "optimizer_step";
    case OpKind::kCollective:
      return "collective";
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
    case OpKind::kCopy:
      return "copy";
    case OpKind::kHostSync:
      return "host_sync";
    case OpKind::kStreamWait:
      return "stream_wait";
    case OpKind::kAlloc:
      return "alloc";
    case OpKind::kFree:
      return "free";
  }
  return "?";
}

std::string_view to_string(Stream stream) {
  switch (stream) {
    case Stream::kCompute:
      return "compute";
    case Stream::kComm:
      return "comm";
    case Stream::kP2p:
      return "p2p";
    case Stream::kDpComm:
      return "dp_comm";
    case Stream::kCopy:
      return "copy";
    case Stream::kCopyAux:
      return "copy_aux";
    case Stream::kCompute2:
      return "compute2";
    case Stream::kComm2:
      return "comm2";
  }
  return "?";
}

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::kSetup:
      return "setup";
    case Phase::kForward:
      return "fwd";
    case Phase::kBackward:
      return "bwd";
    case Phase::kRecompute:
      return "recompute";
    case Phase::kOptimizer:
      return "optimizer";
    case Phase::kTeardown:
      return "teardown";
  }
  return "?";
}

std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
    case CollectiveKind::kBarrier:
      return "barrier";
  }
  return "?";
}

std::string_view to_string(CopyDirection direction) {
  return direction == CopyDirection::kHostToDevice ? "h2d" : "d2h";
}

std::string_view to_string(MemorySpace space) { return space == MemorySpace::kHbm ? "hbm" : "host"; }

std::string_view to_string(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::kWeights:
      return "weights";
    case MemoryCategory::kGradients:
      return "gradients";
    case MemoryCategory::kOptimizer:
      return "optimizer";
    case MemoryCategory::kActivations:
      return "activations";
    case MemoryCategory::kBuffers:
      return "buffers";
    case MemoryCategory::kRuntime:
      return "runtime";
  }
  return "?";
}

std::string_view to_string(OpLabel label) {
  switch (label) {
    case OpLabel::kModelState:
      return "model_state";
    case OpLabel::kEmbedding:
      return "embedding";
    case OpLabel::kNorm:
      return "norm";
    case OpLabel::kQkv:
      return "qkv";
    case OpLabel::kRope:
      return "rope";
    case OpLabel::kAttention:
      return "attention";
    case OpLabel::kAttentionMerge:
      return "attention_merge";
    case OpLabel::kProjection:
      return "projection";
    case OpLabel::kResidual:
      return "residual";
    case OpLabel::kFc1:
      return "fc1";
    case OpLabel::kActivation:
      return "activation";
    case OpLabel::kFc2:
      return "fc2";
    case OpLabel::kFinalNorm:
      return "final_norm";
    case OpLabel::kLmHead:
      return "lm_head";
    case OpLabel::kLoss:
      return "loss";
    case OpLabel::kGradAccumulate:
      return "grad_accumulate";
    case OpLabel::kTpComm:
      return "tp_comm";
    case OpLabel::kSpComm:
      return "sp_comm";
    case OpLabel::kCpComm:
      return "cp_comm";
    case OpLabel::kPpComm:
      return "pp_comm";
    case OpLabel::kGradSync:
      return "grad_sync";
    case OpLabel::kParamGather:
      return "param_gather";
    case OpLabel::kEmbeddingGradSync:
      return "embedding_grad_sync";
    case OpLabel::kLossComm:
      return "loss_comm";
    case OpLabel::kBarrier:
      return "barrier";
    case OpLabel::kOffload:
      return "offload";
    case OpLabel::kFetch:
      return "fetch";
    case OpLabel::kHostSync:
      return "host_sync";
    case OpLabel::kOptimizerStep:
      return "optimizer_step";
    case OpLabel::kActivationStash:
      return "activation_stash";
    case OpLabel::kWorkspace:
      return "workspace";
    case OpLabel::kLayerInput:
      return "layer_input";
    case OpLabel::kGatheredParams:
      return "gathered_params";
    case OpLabel::kChunkBuffer:
      return "chunk_buffer";
    case OpLabel::kCheckpoint:
      return "checkpoint";
    case OpLabel::kLogits:
      return "logits";
    case OpLabel::kCommBuffer:
      return "comm_buffer";
    case OpLabel::kRuntime:
      return "runtime";
    case OpLabel::kWeightGradOperands:
      return "weight_grad_operands";
    case OpLabel::kRouter:
      return "router";
    case OpLabel::kPermute:
      return "permute";
    case OpLabel::kExpertFc1:
      return "expert_fc1";
    case OpLabel::kExpertFc2:
      return "expert_fc2";
    case OpLabel::kEpComm:
      return "ep_comm";
    case OpLabel::kLatent:
      return "latent";
    case OpLabel::kStepSync:
      return "step_sync";
  }
  return "?";
}

std::string_view to_string(GemmPass pass) {
  switch (pass) {
    case GemmPass::kForward:
      return "fwd";
    case GemmPass::kInputGrad:
      return "dgrad";
    case GemmPass::kWeightGrad:
      return "wgrad";
  }
  return "?";
}

std::string op_name(const Op& op) {
  std::string name(to_string(op.phase));
  if (op.layer >= 0) name += fmt::format(" L{}", op.layer);
  if (op.micro_batch >= 0) name += fmt::format(" mb{}", op.micro_batch);
  name += ' ';
  name += to_string(op.label);
  if (op.kind == OpKind::kGemm && op.gemm.pass != GemmPass::kForward) {
    name += '.';
    name += to_string(op.gemm.pass);
  } else if (op.kind == OpKind::kCollective) {
    name += '.';
    name += to_string(op.collective.kind);
  } else if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv || op.kind == OpKind::kAlloc ||
             op.kind == OpKind::kFree || op.kind == OpKind::kCopy) {
    name += '.';
    name += op.kind == OpKind::kCopy ? to_string(op.copy.direction) : to_string(op.kind);
  }
  if (op.index >= 0) name += fmt::format("[{}]", op.index);
  return name;
}

config::CollectiveKind profile_kind(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return config::CollectiveKind::kAllReduce;
    case CollectiveKind::kAllGather:
      return config::CollectiveKind::kAllGather;
    case CollectiveKind::kReduceScatter:
      return config::CollectiveKind::kReduceScatter;
    case CollectiveKind::kAllToAll:
      return config::CollectiveKind::kAllToAll;
    case CollectiveKind::kBarrier:
      return config::CollectiveKind::kBarrier;
  }
  return config::CollectiveKind::kAllReduce;
}

UnfusedAttentionGemms unfused_attention_gemms(const AttentionShape& a) {
  const int64_t rows = int64_t{a.batch} * a.heads * a.q_len;
  return {{rows, a.kv_len, a.head_dim, GemmPass::kForward},
          {rows, a.kv_len, a.value_dim, GemmPass::kForward}};
}

FlopTotals flop_totals(const Graph& graph) {
  FlopTotals t;
  for (const Op& op : graph.ops()) {
    t.executed += op.flops;
    if (op.phase == Phase::kForward || op.phase == Phase::kBackward) t.model += op.model_flops;
    if (op.phase == Phase::kForward || op.phase == Phase::kBackward || op.phase == Phase::kRecompute) {
      t.hardware += op.model_flops;
    }
  }
  return t;
}

}  // namespace trainsim::workload
