// Internal to sim/workload: ZeRO-3 / FSDP parameter gathering and gradient reduce-scatter for one
// rank (pp == 1; derive_shapes rejects ZeRO-3 with pipelining).
//
// Units are the embedding, each transformer layer and the head (final norm + LM head); a unit's
// parameters are all-gathered before each use, forward and backward alike (DeepSpeed stage 3
// releases parameters after each module's forward and re-gathers them in backward; FSDP reshards
// after forward), so a tied embedding matrix is gathered for the embedding and again for the LM
// head. Prefetch is one use ahead: when use k is acquired, the all-gather of use k+1 is issued
// too (FSDP forward/backward prefetch, DeepSpeed's prefetch bucket); Stream::kDpComm's order makes
// it start after the all-gather of use k, and its buffer is allocated only once use k-1 has freed
// its own, so at most two units' gathered parameters are live (FSDP's limit_all_gathers, DeepSpeed's
// max live parameters): the communication stream never runs ahead of the compute and gathers every
// layer at once. Gathered parameters live in a kBuffers allocation from the issue of their
// all-gather until the use's compute is done. After each backward use, the unit's
// full gradient buffer is reduce-scattered to the shards (every micro-batch, as DeepSpeed stage 3
// does) and freed. Volumes per iteration with one micro-batch: 2Ψ all-gathered plus Ψ
// reduce-scattered = 1.5x the DP all-reduce's 2Ψ (Rajbhandari et al. 2020; ground-truth.md A.9).
#ifndef TRAINSIM_SIM_WORKLOAD_ZERO3_H_
#define TRAINSIM_SIM_WORKLOAD_ZERO3_H_

#include <cstdint>
#include <vector>

#include "sim/workload/writer.h"

namespace trainsim::workload {

class ParamGatherer {
 public:
  struct Use {
    int64_t elements;  // parameters of the unit on this rank before sharding
    bool backward;
  };

  // `uses` lists every use in the order the graph will acquire them.
  ParamGatherer(GraphWriter& writer, GroupKind group, int weight_bytes, int grad_bytes,
                std::vector<Use> uses);

  // Acquires the next use (aborts if its size or direction differs from the announced sequence)
  // and prefetches the one after. Returns the all-gather the use's compute must wait for.
  OpId acquire(int64_t elements, bool backward);
  // Ends the current use: frees its gathered parameters after the compute stream's last op; for a
  // backward use, reduce-scatters the unit's gradients once `last_grad` has run.
  void release(OpId last_grad);
  bool done() const { return next_ == uses_.size() && !active_; }

 private:
  void issue(size_t k);

  GraphWriter& w_;
  GroupKind group_;
  int weight_bytes_;
  int grad_bytes_;
  std::vector<Use> uses_;
  std::vector<OpId> gather_;
  std::vector<BufferId> gathered_;
  std::vector<OpId> freed_;  // the release of each use's gathered parameters, once released
  size_t next_ = 0;
  bool active_ = false;
  BufferId grad_buffer_ = -1;
};

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_ZERO3_H_
