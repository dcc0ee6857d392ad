// Where a rank's iteration went. Every second between the iteration's start and its end is given to
// exactly one bucket, by looking at the GPU's kernels (the compute stream, and the second lane of
// overlapped pairs): while one runs the time is compute;
// while it waits, the wait belongs to whatever the next kernel was waiting for (its last predecessor
// to finish): a collective or a non-pipeline send/receive (ring attention's K/V passes) is exposed
// communication, a pipeline send/receive is bubble, a host copy or an offload loop's host
// synchronisation is offload stall, anything else is idle, and so is the part of a wait after that
// predecessor ended (the kernel's host had not issued it yet: the stack's host dispatch,
// cost/rank_schedule.h). An offload loop's host synchronisations count as offload stall while they
// run too; other host synchronisations (a MoE dispatcher waiting for its token counts) as idle.
#ifndef TRAINSIM_SIM_REPORT_BREAKDOWN_H_
#define TRAINSIM_SIM_REPORT_BREAKDOWN_H_

#include <array>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine/engine.h"
#include "sim/workload/graph.h"

namespace trainsim::report {

struct Breakdown {
  double compute_s = 0;
  double exposed_comm_s = 0;
  double bubble_s = 0;
  double offload_stall_s = 0;
  double idle_s = 0;
  // Of compute_s, the kernels outside the transformer layers: embedding, LM head and loss, the
  // optimizer step and what surrounds it (not a bucket of its own: total_s() does not add it).
  double outside_layers_s = 0;
  // Of exposed_comm_s, the seconds each collective kind and group held the compute stream up, keyed
  // "all_gather dp" (point-to-point traffic that is not the pipeline's: "send cp", "recv cp").
  std::map<std::string, double> exposed_comm_by_collective_s;

  double total_s() const { return compute_s + exposed_comm_s + bubble_s + offload_stall_s + idle_s; }
};

// The five parts as reports name them (the "breakdown" object of run, estimate and sweep results),
// in the order tables show them, each with the member holding it.
struct BreakdownPart {
  const char* key;
  double Breakdown::*seconds;
};
inline constexpr std::array<BreakdownPart, 5> kBreakdownParts = {
    {{"compute_s", &Breakdown::compute_s},
     {"exposed_comm_s", &Breakdown::exposed_comm_s},
     {"bubble_s", &Breakdown::bubble_s},
     {"offload_stall_s", &Breakdown::offload_stall_s},
     {"idle_s", &Breakdown::idle_s}}};

// The five parts as a report's "breakdown" object, and back (outside_layers_s and the per-collective
// split are reported elsewhere and read back as 0 and empty).
nlohmann::json to_json(const Breakdown& b);
Breakdown breakdown_from_json(const nlohmann::json& parts);

// One pipeline stage's time, as a run report's "stages" rows state it: the stage's first simulated
// rank over the iteration up to its own last op (the critical rank alone can be a light stage that
// mostly waits for the heavy ones).
struct StageBreakdown {
  int64_t stage = 0;
  int64_t layers = 0;  // the transformer layers the stage holds, all its model chunks
  int64_t rank = 0;
  double busy_until_s = 0;  // its last op's end, from the iteration's start
  Breakdown breakdown;
};

// A stage's row: the five parts (to_json of its breakdown), stage, layers, rank and busy_until_s.
nlohmann::json to_json(const StageBreakdown& stage);

// The breakdown of `run` (ops of `graph`) over [start_s, end_s], the rank's last iteration.
Breakdown attribute_time(const workload::Graph& graph, const engine::RankRun& run, double start_s,
                         double end_s);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_BREAKDOWN_H_
