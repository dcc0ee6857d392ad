#include "sim/workload/zero3.h"

#include "sim/workload/errors.h"

namespace trainsim::workload {

ParamGatherer::ParamGatherer(GraphWriter& writer, GroupKind group, int weight_bytes, int grad_bytes,
                             std::vector<Use> uses)
    : w_(writer),
      group_(group),
      weight_bytes_(weight_bytes),
      grad_bytes_(grad_bytes),
      uses_(std::move(uses)),
      gather_(uses_.size(), kNoOp),
      gathered_(uses_.size(), -1),
      freed_(uses_.size(), kNoOp) {}

void ParamGatherer::issue(size_t k) {
  if (k >= uses_.size() || gathered_[k] >= 0) return;
  const double bytes = static_cast<double>(uses_[k].elements) * weight_bytes_;
  const OpId two_back_freed = k >= 2 ? freed_[k - 2] : kNoOp;
  gathered_[k] = w_.alloc(OpLabel::kGatheredParams, MemoryCategory::kBuffers, MemorySpace::kHbm, bytes,
                          Stream::kDpComm, {two_back_freed})
                     .buffer;
  gather_[k] =
      w_.collective(OpLabel::kParamGather, CollectiveKind::kAllGather, group_, bytes, Stream::kDpComm);
}

OpId ParamGatherer::acquire(int64_t elements, bool backward) {
  TRAINSIM_WORKLOAD_CHECK(!active_) << "use " << next_ << " acquired while the previous one is active";
  TRAINSIM_WORKLOAD_CHECK(next_ < uses_.size())
      << "more parameter uses than announced (" << uses_.size() << ")";
  const Use& use = uses_[next_];
  TRAINSIM_WORKLOAD_CHECK(use.elements == elements && use.backward == backward)
      << "use " << next_ << " announced as " << use.elements << (use.backward ? " bwd" : " fwd")
      << ", acquired as " << elements << (backward ? " bwd" : " fwd");
  issue(next_);
  issue(next_ + 1);
  active_ = true;
  if (backward) {
    grad_buffer_ = w_.alloc(OpLabel::kCommBuffer, MemoryCategory::kBuffers, MemorySpace::kHbm,
                            static_cast<double>(elements) * grad_bytes_, Stream::kCompute)
                       .buffer;
  }
  return gather_[next_];
}

void ParamGatherer::release(OpId last_grad) {
  TRAINSIM_WORKLOAD_CHECK(active_) << "release without acquire";
  const Use& use = uses_[next_];
  freed_[next_] = w_.release(gathered_[next_], Stream::kCompute);
  if (use.backward) {
    w_.collective(OpLabel::kGradSync, CollectiveKind::kReduceScatter, group_,
                  static_cast<double>(use.elements) * grad_bytes_, Stream::kDpComm, {last_grad});
    w_.release(grad_buffer_, Stream::kDpComm);
    grad_buffer_ = -1;
  }
  active_ = false;
  ++next_;
}

}  // namespace trainsim::workload
