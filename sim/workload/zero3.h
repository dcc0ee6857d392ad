// Internal to sim/workload: ZeRO-3 / FSDP parameter gathering and gradient reduce-scatter for one
// rank.
//
// Units are the embedding, each transformer layer and the head (final norm + LM head) of every model
// chunk; a unit's parameters are all-gathered before a use and its gradients reduce-scattered after
// the backward, as the announced `Use` sequence says. Three policies produce that sequence
// (builder.cc, param_uses):
//   pp == 1, reshard after forward   every use gathers and frees after it (DeepSpeed stage 3 releases
//                                    parameters after each module's forward and re-gathers them in
//                                    backward; FSDP's reshard_after_forward=True), so a tied
//                                    embedding matrix is gathered for the embedding and again for
//                                    the LM head; gradients are reduce-scattered after every backward
//                                    use (every micro-batch, as DeepSpeed stage 3 does)
//   pp == 1, keep until backward     the forward gathers, the backward of the same micro-batch reuses
//                                    and frees (FSDP's reshard_after_forward=False)
//   pp > 1                           torchtitan's FSDP2 under torch.distributed.pipelining: the
//                                    stage runs every backward with set_requires_gradient_sync(False)
//                                    and set_reshard_after_backward(False), then, after the chunk's
//                                    last backward, FSDP's post_backward for every unit
//                                    (torch/distributed/pipelining/stage.py,
//                                    backward_maybe_with_nosync); with reshard_after_forward=False
//                                    (torchtitan's default under PP) each unit is gathered once, at
//                                    its first forward, and held, its gradients accumulate unsharded
//                                    in the reduce dtype (FSDPParam.to_accumulated_grad_if_needed) and
//                                    are reduce-scattered once per iteration
// Granularity. A unit's all-gather is one collective per call of `Use::calls`: its parameter tensors in
// the order of use, coalesced until a call holds the gather bucket (RankShapes::
// zero3_gather_bucket_elements: DeepSpeed stage 3 gathers the submodule in use and prefetches the next
// tensors in its trace up to stage3_prefetch_bucket_size elements, one coalesced all-gather per batch;
// FSDP one per unit); tensors under its persistence threshold stay whole on every rank and are not
// gathered; the calls run one after the other on the data-parallel stream. Gradients are
// reduce-scattered per unit, or, with a reduction bucket (RankShapes::zero3_reduce_bucket_elements,
// DeepSpeed's ipg bucket of reduce_bucket_size elements), collected until the next unit would take
// the bucket past its size and at the end of every backward (`Use::end_of_backward`), one
// reduce-scatter per bucket, their unsharded gradients held until then.
// Prefetch is one use ahead: when use k is acquired, the all-gather of use k+1 is issued too (FSDP
// forward/backward prefetch, DeepSpeed's prefetch bucket); Stream::kDpComm's order makes it start
// after the all-gather of use k, and a buffer freed after its own use is allocated only once the
// gather two before has freed its own, so at most two such units are live (FSDP's
// limit_all_gathers, DeepSpeed's max live parameters). Volumes per iteration with one micro-batch and
// pp == 1: 2Ψ all-gathered plus Ψ reduce-scattered = 1.5x the DP all-reduce's 2Ψ (Rajbhandari et
// al. 2020; ground-truth.md A.9); with pp > 1, Ψ + Ψ per iteration whatever the micro-batches.
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
    int64_t unit = 0;        // index of the unit among this rank's units
    bool gather = true;      // all-gathered for this use; else still held from an earlier use
    bool free_after = true;  // the gathered parameters are freed once this use's compute is done
    // Units whose gradients are reduce-scattered after this use (their unsharded gradient buffers,
    // allocated at their first backward use, then freed, and their parameters too if still held).
    std::vector<int64_t> reduce;
    // Elements of each all-gather that gathers the unit for this use, in order: `elements` less the
    // tensors kept whole on every rank (RankShapes::zero3_persistent).
    std::vector<int64_t> calls;
    bool end_of_backward = false;  // the micro-batch's backward ends with this use: flush the bucket
  };

  // `uses` lists every use in the order the graph will acquire them. `per_iteration`: parameters
  // and gradient accumulators held across micro-batches count as weights and gradients (pp > 1),
  // not as transient buffers. `reduce_bucket_elements`: the reduction bucket (0: per unit).
  ParamGatherer(GraphWriter& writer, GroupKind group, int weight_bytes, int grad_bytes, std::vector<Use> uses,
                bool per_iteration, double reduce_bucket_elements);

  // Acquires the next use (aborts if its size or direction differs from the announced sequence)
  // and prefetches the one after. Returns the all-gather the use's compute must wait for.
  OpId acquire(int64_t elements, bool backward);
  // Ends the current use: frees its gathered parameters after the compute stream's last op when the
  // use says so; reduce-scatters the gradients of the units it names once `last_grad` has run.
  void release(OpId last_grad);
  bool done() const { return next_ == uses_.size() && !active_ && bucket_.empty(); }

 private:
  void issue(size_t k);
  void free_params(int64_t unit);
  // Reduce-scatters the gradients of the bucket's units in one collective after `after`.
  void reduce_bucket(OpId after);

  GraphWriter& w_;
  GroupKind group_;
  int weight_bytes_;
  int grad_bytes_;
  std::vector<Use> uses_;
  bool per_iteration_;
  double reduce_bucket_elements_;
  std::vector<OpId> gather_;            // per use: its all-gather (kNoOp when it gathers nothing)
  std::vector<BufferId> gathered_;      // per use: the buffer it gathered into
  std::vector<OpId> freed_;             // per use: the release of its buffer, once released
  std::vector<size_t> gathering_;       // the uses that gather, in order
  std::vector<int64_t> unit_elements_;  // per unit: its parameters on this rank before sharding
  std::vector<int64_t> holder_;         // per unit: the use whose gathered parameters it holds, or -1
  std::vector<BufferId> grads_;         // per unit: its unsharded gradient buffer, or -1
  std::vector<int64_t> bucket_;         // units whose gradients wait in the reduction bucket
  double bucket_elements_ = 0;
  size_t next_ = 0;
  bool active_ = false;
};

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_ZERO3_H_
