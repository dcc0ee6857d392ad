// Internal to sim/workload: data-parallel gradient synchronisation and ZeRO-1/2 parameter gathering
// for one rank.
//
// Buckets (Megatron-LM distributed data parallel, PyTorch DDP): gradients are reported in the order
// the backward produces them (reverse layer order, one report per weight-gradient GEMM or norm);
// a bucket closes once it holds at least `bucket_bytes`, and a gradient larger than a bucket is a
// bucket by itself. With overlap, a closed bucket is reduced at once on Stream::kDpComm while the
// backward goes on; without, the buckets are reduced after the whole backward (ZeRO-2: after the
// backward of each micro-batch).
// When the reduction happens and what it is:
//   ZeRO-0 (DDP)   all-reduce, in the last backward of each model chunk (gradient accumulation keeps
//                  the earlier micro-batches local: DDP no_sync / Megatron's last-micro-batch rule)
//   ZeRO-1         reduce-scatter, same timing (Megatron distributed optimizer); after the optimizer
//                  step the updated parameters are all-gathered bucket by bucket
//   ZeRO-2         reduce-scatter in every backward (DeepSpeed stage 2 keeps no full-size gradient
//                  buffer, so it reduces each micro-batch), then the same parameter all-gather
//   ZeRO-3         see zero3.h
// Bytes per collective are the bucket's gradients (all-reduce, reduce-scatter input) or parameters
// (all-gather output), matching ZeRO's 2Ψ (DP) and Ψ + Ψ (ZeRO-1/2) per iteration.
#ifndef TRAINSIM_SIM_WORKLOAD_DP_H_
#define TRAINSIM_SIM_WORKLOAD_DP_H_

#include <cstdint>
#include <vector>

#include "sim/workload/writer.h"

namespace trainsim::workload {

class GradientSync {
 public:
  // `group` is where gradients are reduced (dp, or dp_sp when sp > 1); `grad_bytes` and
  // `weight_bytes` are per element.
  GradientSync(GraphWriter& writer, int zero_stage, GroupKind group, double bucket_bytes, bool overlap,
               int grad_bytes, int weight_bytes);

  // Opens a backward pass. `reduce`: gradients of this pass are reduced in this iteration;
  // `last_for_chunk`: this is the chunk's last backward (its buckets define the parameter gather).
  void begin_backward(bool reduce, bool last_for_chunk);
  // `elements` gradients of this rank finished by `producer` (a compute-stream op).
  void produced(OpId producer, int64_t elements);
  // Closes the pass: issues (or defers) the partly filled bucket.
  void end_backward();
  // Issues the deferred buckets (no overlap) and returns every reduction op, which the optimizer
  // step must wait for.
  std::vector<OpId> finish();
  // ZeRO-1/2: all-gathers the updated parameters after `step`, one collective per bucket. Returns
  // the collectives (empty for other stages).
  std::vector<OpId> gather_parameters(OpId step);

 private:
  void close_bucket();
  void issue(int64_t elements, OpId after);
  void issue_deferred();

  GraphWriter& w_;
  int zero_stage_;
  GroupKind group_;
  double bucket_elements_;
  bool overlap_;
  int grad_bytes_;
  int weight_bytes_;
  bool open_ = false;
  bool reduce_ = false;
  bool last_for_chunk_ = false;
  int64_t pending_ = 0;
  OpId pending_producer_ = kNoOp;
  struct Deferred {
    int64_t elements;
    OpId producer;
  };
  std::vector<Deferred> deferred_;
  std::vector<OpId> reductions_;
  std::vector<int64_t> parameter_buckets_;
};

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_DP_H_
