// Closed-form communication per rank and iteration, per collective kind and group: the
// seed paper's analytical view (Anthony et al. 2024; seed-papers.md B4, ground-truth.md B.11,
// A.7, B.4, A8) extended to every message the frameworks send, so that it can be set against the
// communication log of the graphs (workload/comm_log.h, same volume conventions).
//
// Per micro-batch and layer, with m = e*b*(s/sp)*h the tensor-parallel message, u FPDT chunks:
//   TP          4 all-reduces of m (2 forward, 2 backward), +2 with full recompute
//   TP + SP     2 all-gathers + 2 reduce-scatters forward; 4 all-gathers + 2 reduce-scatters
//               backward (the input is gathered again for the weight gradient); +2 + 2 recomputed
//   Ulysses     4 all-to-alls forward (q, k, v, o) + 4 backward (dO, dq, dk, dv), +4 recomputed
//   Ring        P-1 sends of K/V forward; backward sends K/V, P-2 times K/V + dK/dV, then dK/dV
//   FPDT        4u all-to-alls of 1/u the Ulysses size forward and 4u backward (+4u recomputed);
//               with offload u world barriers forward, 2u-1 backward (+u recomputed)
//   PP          one send of e*b*(s/sp)*h/(t under SP) per micro-batch and model chunk to the next
//               virtual stage, and one gradient back
// Per iteration, with Ψ this rank's parameters (bytes per element e): DP all-reduce 2Ψe; ZeRO-1
// reduce-scatter Ψe + all-gather Ψe; ZeRO-2 reduce-scatter every micro-batch (gΨe) + all-gather Ψe;
// ZeRO-3 all-gather 2gΨe + reduce-scatter gΨe (B4's 3Ψ = 1.5 x DP with g = 1), gΨe + gΨe when
// parameters stay gathered from forward to backward, Ψe + Ψe under pipelining (zero3.h).
// Embedding/head: one TP reduction of m each way, 3 fp32 per-token all-reduces for the
// vocab-parallel loss, the loss exchange over the sequence group (ring: 8 bytes all-reduced,
// Ulysses/FPDT: the fp32 per-token loss all-gathered), the tied-embedding all-reduce between the
// first and last stage, the all-reduce of sequence-parallel norm gradients over TP.
#ifndef TRAINSIM_SIM_ANALYTIC_COMM_VOLUME_H_
#define TRAINSIM_SIM_ANALYTIC_COMM_VOLUME_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/workload/comm_log.h"

namespace trainsim::analytic {

struct ExpectedComm {
  workload::CommKind kind;
  workload::GroupKind group;
  double calls = 0;           // 0 for bucketed data-parallel reductions (volume only)
  double bytes_per_call = 0;  // 0 for bucketed data-parallel reductions
  double volume_bytes = 0;    // the seed paper's view (workload/comm_log.h)
  std::string source;         // which formula: "layers", "pipeline", "data-parallel", ...
};

// What one rank of `stage` sends per iteration, one entry per formula and message size. Throws
// workload::PlanError when the scenario cannot be expressed.
std::vector<ExpectedComm> expected_comm(const config::Scenario& scenario, int64_t stage);

// The seed paper's headline formulas (bytes per rank):
double dp_allreduce_volume(double params, double bytes_per_element);                    // 2Ψe
double zero3_volume(double params, double bytes_per_element);                           // 3Ψe
double tp_layer_wire_volume(double b, double s, double h, double t, double e);          // 8bsh(t-1)/t * e
double ulysses_layer_forward_volume(double b, double s, double h, double p, double e);  // 4bsh/P * e (MHA)

}  // namespace trainsim::analytic

#endif  // TRAINSIM_SIM_ANALYTIC_COMM_VOLUME_H_
