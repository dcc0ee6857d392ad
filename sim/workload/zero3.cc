#include "sim/workload/zero3.h"

#include <algorithm>

#include "sim/workload/errors.h"

namespace trainsim::workload {

ParamGatherer::ParamGatherer(GraphWriter& writer, GroupKind group, int weight_bytes, int grad_bytes,
                             std::vector<Use> uses, bool per_iteration, double reduce_bucket_elements)
    : w_(writer),
      group_(group),
      weight_bytes_(weight_bytes),
      grad_bytes_(grad_bytes),
      uses_(std::move(uses)),
      per_iteration_(per_iteration),
      reduce_bucket_elements_(reduce_bucket_elements),
      gather_(uses_.size(), kNoOp),
      gathered_(uses_.size(), -1),
      freed_(uses_.size(), kNoOp) {
  for (size_t k = 0; k < uses_.size(); ++k) {
    const Use& use = uses_[k];
    if (use.gather) {
      int64_t gathered = 0;
      for (const int64_t call : use.calls) gathered += call;
      TRAINSIM_WORKLOAD_CHECK(gathered <= use.elements)
          << "use " << k << " gathers " << gathered << " of its " << use.elements << " elements";
      gathering_.push_back(k);
    }
    if (use.unit >= static_cast<int64_t>(unit_elements_.size())) unit_elements_.resize(use.unit + 1, 0);
    unit_elements_[use.unit] = use.elements;
  }
  holder_.assign(unit_elements_.size(), -1);
  grads_.assign(unit_elements_.size(), -1);
}

void ParamGatherer::issue(size_t k) {
  if (k >= uses_.size() || !uses_[k].gather || gathered_[k] >= 0) return;
  // Two gathers back: its buffer must be gone first when it is freed after its own use.
  const auto position = std::lower_bound(gathering_.begin(), gathering_.end(), k) - gathering_.begin();
  OpId two_back_freed = kNoOp;
  if (position >= 2) {
    const size_t earlier = gathering_[position - 2];
    if (uses_[earlier].free_after) two_back_freed = freed_[earlier];
  }
  double bytes = 0;
  for (const int64_t call : uses_[k].calls) bytes += static_cast<double>(call) * weight_bytes_;
  gathered_[k] =
      w_.alloc(OpLabel::kGatheredParams, per_iteration_ ? MemoryCategory::kWeights : MemoryCategory::kBuffers,
               MemorySpace::kHbm, bytes, Stream::kDpComm, {two_back_freed})
          .buffer;
  for (const int64_t call : uses_[k].calls) {
    gather_[k] = w_.collective(OpLabel::kParamGather, CollectiveKind::kAllGather, group_,
                               static_cast<double>(call) * weight_bytes_, Stream::kDpComm);
  }
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
  if (use.gather) holder_[use.unit] = static_cast<int64_t>(next_);
  TRAINSIM_WORKLOAD_CHECK(holder_[use.unit] >= 0) << "use " << next_ << " of a unit nobody gathered";
  if (backward && grads_[use.unit] < 0) {
    grads_[use.unit] =
        w_.alloc(per_iteration_ ? OpLabel::kGradAccumulate : OpLabel::kCommBuffer,
                 per_iteration_ ? MemoryCategory::kGradients : MemoryCategory::kBuffers, MemorySpace::kHbm,
                 static_cast<double>(elements) * grad_bytes_, Stream::kCompute)
            .buffer;
  }
  return gather_[holder_[use.unit]];
}

void ParamGatherer::free_params(int64_t unit) {
  const int64_t holder = holder_[unit];
  freed_[holder] = w_.release(gathered_[holder], Stream::kCompute);
  holder_[unit] = -1;
}

void ParamGatherer::reduce_bucket(OpId after) {
  if (bucket_.empty()) return;
  w_.collective(OpLabel::kGradSync, CollectiveKind::kReduceScatter, group_, bucket_elements_ * grad_bytes_,
                Stream::kDpComm, {after});
  for (const int64_t unit : bucket_) {
    w_.release(grads_[unit], Stream::kDpComm);
    grads_[unit] = -1;
    if (holder_[unit] >= 0) free_params(unit);
  }
  bucket_.clear();
  bucket_elements_ = 0;
}

void ParamGatherer::release(OpId last_grad) {
  TRAINSIM_WORKLOAD_CHECK(active_) << "release without acquire";
  const Use& use = uses_[next_];
  if (use.free_after) free_params(use.unit);
  for (const int64_t unit : use.reduce) {
    TRAINSIM_WORKLOAD_CHECK(grads_[unit] >= 0) << "unit " << unit << " reduced before any backward";
    const auto elements = static_cast<double>(unit_elements_[unit]);
    if (bucket_elements_ + elements > reduce_bucket_elements_) reduce_bucket(last_grad);
    bucket_.push_back(unit);
    bucket_elements_ += elements;
  }
  if (reduce_bucket_elements_ <= 0 || use.end_of_backward) reduce_bucket(last_grad);
  active_ = false;
  ++next_;
}

}  // namespace trainsim::workload
