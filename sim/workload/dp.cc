#include "sim/workload/dp.h"

#include "sim/workload/errors.h"

namespace trainsim::workload {

GradientSync::GradientSync(GraphWriter& writer, int zero_stage, GroupKind group, double bucket_bytes,
                           bool overlap, int grad_bytes, int weight_bytes)
    : w_(writer),
      zero_stage_(zero_stage),
      group_(group),
      bucket_elements_(bucket_bytes / grad_bytes),
      overlap_(overlap),
      grad_bytes_(grad_bytes),
      weight_bytes_(weight_bytes) {
  TRAINSIM_WORKLOAD_CHECK(bucket_bytes > 0) << "bucket of " << bucket_bytes << " bytes";
}

void GradientSync::begin_backward(bool reduce, bool last_for_chunk) {
  TRAINSIM_WORKLOAD_CHECK(!open_) << "backward pass opened twice";
  open_ = true;
  reduce_ = reduce && zero_stage_ <= 2;
  last_for_chunk_ = last_for_chunk && zero_stage_ <= 2;
}

void GradientSync::produced(OpId producer, int64_t elements) {
  TRAINSIM_WORKLOAD_CHECK(open_) << "gradients reported outside a backward pass";
  if (!reduce_ || elements == 0) return;
  pending_ += elements;
  pending_producer_ = producer;
  if (static_cast<double>(pending_) >= bucket_elements_) close_bucket();
}

void GradientSync::close_bucket() {
  if (pending_ == 0) return;
  if (last_for_chunk_) parameter_buckets_.push_back(pending_);
  if (overlap_) {
    issue(pending_, pending_producer_);
  } else {
    deferred_.push_back({pending_, pending_producer_});
  }
  pending_ = 0;
  pending_producer_ = kNoOp;
}

void GradientSync::issue(int64_t elements, OpId after) {
  const CollectiveKind kind = zero_stage_ == 0 ? CollectiveKind::kAllReduce : CollectiveKind::kReduceScatter;
  const OpId op = w_.collective(OpLabel::kGradSync, kind, group_, static_cast<double>(elements) * grad_bytes_,
                                Stream::kDpComm, {after});
  if (op != kNoOp) reductions_.push_back(op);
}

void GradientSync::issue_deferred() {
  const OpId after = w_.last(Stream::kCompute);
  for (const Deferred& bucket : deferred_) issue(bucket.elements, after);
  deferred_.clear();
}

void GradientSync::end_backward() {
  TRAINSIM_WORKLOAD_CHECK(open_) << "backward pass closed twice";
  if (reduce_) close_bucket();
  // ZeRO-2 reduces every micro-batch: without overlap, right after that micro-batch's backward.
  if (zero_stage_ == 2) issue_deferred();
  open_ = false;
}

std::vector<OpId> GradientSync::finish() {
  TRAINSIM_WORKLOAD_CHECK(!open_) << "finish() inside a backward pass";
  issue_deferred();
  return reductions_;
}

std::vector<OpId> GradientSync::gather_parameters(OpId step) {
  std::vector<OpId> gathers;
  if (zero_stage_ != 1 && zero_stage_ != 2) return gathers;
  for (int64_t elements : parameter_buckets_) {
    const OpId op = w_.collective(OpLabel::kParamGather, CollectiveKind::kAllGather, group_,
                                  static_cast<double>(elements) * weight_bytes_, Stream::kDpComm, {step});
    if (op != kNoOp) gathers.push_back(op);
  }
  return gathers;
}

}  // namespace trainsim::workload
