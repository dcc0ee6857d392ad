#include "sim/workload/writer.h"

#include "sim/workload/errors.h"

namespace trainsim::workload {

int64_t p2p_tag(P2pKind kind, int64_t micro_batch, int64_t where, int64_t step) {
  TRAINSIM_WORKLOAD_CHECK(micro_batch >= 0 && micro_batch < (int64_t{1} << 24))
      << "micro-batch " << micro_batch;
  TRAINSIM_WORKLOAD_CHECK(where >= 0 && where < (int64_t{1} << 16)) << "layer/stage " << where;
  TRAINSIM_WORKLOAD_CHECK(step >= 0 && step < (int64_t{1} << 16)) << "step " << step;
  return (static_cast<int64_t>(kind) << 56) | (micro_batch << 32) | (where << 16) | step;
}

GraphWriter::GraphWriter(Graph& graph, const ParallelPlan& plan, int64_t rank, config::Dtype dtype)
    : graph_(graph),
      plan_(plan),
      rank_(rank),
      dtype_(config::storage_dtype(dtype)),
      linear_dtype_(dtype),
      act_bytes_(config::dtype_bytes(dtype_)) {
  last_.fill(kNoOp);
  for (size_t k = 0; k < group_size_.size(); ++k) group_size_[k] = plan.group_size(static_cast<GroupKind>(k));
  group_index_.fill(-1);
}

Stream GraphWriter::on_lane(Stream stream) const {
  if (lane_ == 0) return stream;
  if (stream == Stream::kCompute) return Stream::kCompute2;
  if (stream == Stream::kComm) return Stream::kComm2;
  return stream;
}

Op GraphWriter::make(OpKind kind, OpLabel label, Stream stream, int32_t index) const {
  Op op;
  op.kind = kind;
  op.label = label;
  op.stream = on_lane(stream);
  op.phase = position_.phase;
  op.layer = position_.layer;
  op.micro_batch = position_.micro_batch;
  op.index = index;
  op.dtype = dtype_;
  return op;
}

OpId GraphWriter::append(Op op, Deps deps, bool chain) {
  chain = chain && op.stream != Stream::kP2p;
  scratch_.clear();
  const int s = static_cast<int>(op.stream);
  if (chain && last_[s] != kNoOp) scratch_.push_back(last_[s]);
  for (OpId d : deps) {
    if (d != kNoOp) scratch_.push_back(d);
  }
  const OpId id = graph_.add(op, scratch_);
  if (chain) last_[s] = id;
  return id;
}

Op GraphWriter::gemm_op(OpLabel label, GemmPass pass, int32_t groups, int64_t m, int64_t n, int64_t k,
                        double useful, int32_t index) const {
  TRAINSIM_WORKLOAD_CHECK(m > 0 && n > 0 && k > 0 && groups > 0 && useful > 0 && useful <= 1)
      << "gemm " << groups << " x " << m << 'x' << n << 'x' << k << ", " << useful << " useful";
  Op op = make(OpKind::kGemm, label, Stream::kCompute, index);
  if (linear_layer(label)) op.dtype = linear_dtype_;
  op.gemm = {m, n, k, pass, groups};
  const double md = static_cast<double>(m), nd = static_cast<double>(n), kd = static_cast<double>(k);
  op.flops = 2.0 * md * nd * kd * groups;
  op.model_flops = op.flops * useful;
  op.bytes = act_bytes_ * (md * kd + kd * nd + md * nd) * groups;
  return op;
}

OpId GraphWriter::gemm(OpLabel label, GemmPass pass, int64_t m, int64_t n, int64_t k, Deps deps,
                       int32_t index) {
  return append(gemm_op(label, pass, 1, m, n, k, 1.0, index), deps, true);
}

OpId GraphWriter::grouped_gemm(OpLabel label, GemmPass pass, int32_t groups, int64_t m, int64_t n, int64_t k,
                               double useful, Deps deps) {
  return append(gemm_op(label, pass, groups, m, n, k, useful, -1), deps, true);
}

OpId GraphWriter::attention(bool backward, const AttentionShape& shape, double model_flops, Deps deps,
                            int32_t index) {
  Op op = make(backward ? OpKind::kAttentionBackward : OpKind::kAttentionForward, OpLabel::kAttention,
               Stream::kCompute, index);
  op.attention = shape;
  const double dense = 2.0 * shape.batch * shape.heads * static_cast<double>(shape.q_len) * shape.kv_len *
                       (shape.head_dim + shape.value_dim);
  op.model_flops = model_flops;
  if (shape.fused) {
    // A flash kernel skips masked tiles; its backward runs five matmuls against the forward's two.
    const double forward = shape.causal ? dense / 2 : dense;
    op.flops = backward ? 2.5 * forward : forward;
    // Q, K, V, O (and dO, dQ, dK, dV in backward) once each.
    const double qo =
        static_cast<double>(shape.batch) * shape.heads * shape.q_len * (shape.head_dim + shape.value_dim);
    const double kv =
        static_cast<double>(shape.batch) * shape.kv_heads * shape.kv_len * (shape.head_dim + shape.value_dim);
    op.bytes = act_bytes_ * (qo + kv) * (backward ? 2 : 1);
  } else {
    // Megatron's unfused core attention computes the masked entries too: two batched GEMMs forward
    // (QK^T, PV), four backward. `bytes` counts only the passes over the score matrix between them
    // (the GEMMs' own reads and writes are costed with the GEMMs): forward the fused scale-mask-softmax
    // (read S, write P) and dropout (read P, write P' and a 1-byte mask); backward the dropout
    // backward (read dP', mask, write dP) and the softmax backward (read dP and P, write dS).
    op.flops = backward ? 2 * dense : dense;
    const double scores = static_cast<double>(shape.batch) * shape.heads * shape.q_len * shape.kv_len;
    const double dropout_bytes = shape.dropout ? 2.0 * act_bytes_ + 1 : 0.0;
    op.bytes = scores * ((backward ? 3.0 : 2.0) * act_bytes_ + dropout_bytes);
  }
  return append(op, deps, true);
}

OpId GraphWriter::memory(OpLabel label, double bytes, Deps deps, int32_t index) {
  Op op = make(OpKind::kMemory, label, Stream::kCompute, index);
  op.bytes = bytes;
  return append(op, deps, true);
}

OpId GraphWriter::collective(OpLabel label, CollectiveKind kind, GroupKind group, double bytes, Stream stream,
                             Deps deps, int32_t index) {
  const auto k = static_cast<size_t>(group);
  if (group_size_[k] <= 1) return kNoOp;
  if (group_index_[k] < 0) group_index_[k] = plan_.group_of(rank_, group).index;
  Op op = make(OpKind::kCollective, label, stream, index);
  op.collective = {kind, {group, group_index_[k]}, seq_[k]++};
  op.bytes = bytes;
  return append(op, deps, true);
}

OpId GraphWriter::send(OpLabel label, int64_t peer, int64_t tag, double bytes, Deps deps, int32_t index) {
  Op op = make(OpKind::kSend, label, Stream::kP2p, index);
  op.p2p = {static_cast<int32_t>(peer), tag};
  op.bytes = bytes;
  return append(op, deps, false);
}

OpId GraphWriter::recv(OpLabel label, int64_t peer, int64_t tag, double bytes, Deps deps, int32_t index) {
  Op op = make(OpKind::kRecv, label, Stream::kP2p, index);
  op.p2p = {static_cast<int32_t>(peer), tag};
  op.bytes = bytes;
  return append(op, deps, false);
}

OpId GraphWriter::copy(OpLabel label, CopyDirection direction, double bytes, Stream stream, Deps deps,
                       int32_t index) {
  Op op = make(OpKind::kCopy, label, stream, index);
  op.copy = {direction};
  op.bytes = bytes;
  return append(op, deps, true);
}

OpId GraphWriter::host_sync(OpLabel label, Deps deps, int32_t index) {
  Op op = make(OpKind::kHostSync, label, Stream::kCompute, index);
  return append(op, deps, true);
}

OpId GraphWriter::wait(Stream stream, Deps deps, int32_t index) {
  Op op = make(OpKind::kStreamWait, OpLabel::kHostSync, stream, index);
  return append(op, deps, true);
}

OpId GraphWriter::optimizer_step(double params, double bytes_per_param, double flops_per_param, Deps deps) {
  Op op = make(OpKind::kOptimizerStep, OpLabel::kOptimizerStep, Stream::kCompute, -1);
  op.bytes = params * bytes_per_param;
  op.flops = params * flops_per_param;
  return append(op, deps, true);
}

GraphWriter::Allocation GraphWriter::alloc(OpLabel label, MemoryCategory category, MemorySpace space,
                                           double bytes, Stream stream, Deps deps, int32_t index) {
  TRAINSIM_WORKLOAD_CHECK(bytes >= 0) << "allocation of " << bytes << " bytes";
  const BufferId buffer = static_cast<BufferId>(buffers_.size());
  buffers_.push_back({bytes, space, category, label, true});
  Op op = make(OpKind::kAlloc, label, stream, index);
  op.buffer = {buffer, space, category};
  op.bytes = bytes;
  return {buffer, append(op, deps, true)};
}

void GraphWriter::resize(Allocation allocation, double bytes) {
  BufferState& state = buffers_.at(static_cast<size_t>(allocation.buffer));
  TRAINSIM_WORKLOAD_CHECK(state.live) << "resize of freed buffer " << allocation.buffer;
  state.bytes = bytes;
  graph_.resize_allocation(allocation.op, bytes);
}

OpId GraphWriter::release(BufferId buffer, Stream stream, Deps deps) {
  TRAINSIM_WORKLOAD_CHECK(buffer >= 0 && buffer < static_cast<BufferId>(buffers_.size()))
      << "buffer " << buffer;
  BufferState& state = buffers_[buffer];
  TRAINSIM_WORKLOAD_CHECK(state.live)
      << "buffer " << buffer << " (" << to_string(state.label) << ") freed twice";
  state.live = false;
  Op op = make(OpKind::kFree, state.label, stream, -1);
  op.buffer = {buffer, state.space, state.category};
  op.bytes = state.bytes;
  return append(op, deps, true);
}

bool GraphWriter::all_released() const {
  for (const BufferState& b : buffers_) {
    if (b.live) return false;
  }
  return true;
}

}  // namespace trainsim::workload
