// Why a plan is as slow as it is, from the critical rank's simulated iteration: which collectives
// held its compute stream up and for how long, how far each class of its kernels ran from its
// roofline, how its pipeline bubble compares with the schedule's ideal and what widened it, and how
// much memory it leaves free. `trainsim run` adds the changes of plan the closed-form estimate predicts
// would help most (search/advice.h) and prints it all as the "why" section.
#ifndef TRAINSIM_SIM_REPORT_WHY_SLOW_H_
#define TRAINSIM_SIM_REPORT_WHY_SLOW_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/engine/engine.h"
#include "sim/report/breakdown.h"
#include "sim/workload/graph.h"

namespace trainsim::report {

// A collective kind and group's time that held the compute stream up.
struct ExposedCollective {
  std::string collective;  // "all_reduce dp"
  double exposed_s = 0;
  double fraction = 0;  // of the iteration
};

// The critical rank's compute-stream kernels of one op label over the iteration, against their
// roofline: the FLOPs at the dtype's dense peak, the bytes at the HBM bandwidth.
struct KernelClassTime {
  std::string label;
  double busy_s = 0;
  double flops = 0;
  double bytes = 0;
  double roofline_s = 0;
  bool compute_bound = true;  // the FLOPs' time is the roofline's larger part
  double efficiency() const { return roofline_s / busy_s; }
};

struct BubbleAnalysis {
  double simulated_s = 0;
  double fraction = 0;        // of the iteration
  double ideal_fraction = 0;  // the closed form's (p - 1) / (m v)
  // With more than one pipeline stage: how far the stages' compute differs, and which.
  struct Spread {
    double compute_s = 0;
    int64_t heaviest_stage = 0;
    int64_t lightest_stage = 0;
  };
  std::optional<Spread> spread;
};

struct WhySlow {
  std::vector<ExposedCollective> exposed_comm;  // longest first
  std::vector<KernelClassTime> kernels;         // longest busy time first
  BubbleAnalysis bubble;
  double free_hbm_bytes = 0;  // under the usable limit
  double free_hbm_fraction = 0;
  // The changes of plan search/advice.h predicts would help most, as its to_json writes them, when
  // the caller adds them (`trainsim run`); null otherwise.
  nlohmann::json changes;
};

// Why the critical rank's iteration (`critical_graph` and `critical_run` over [start_s, end_s]) is
// as slow as it is. `stages`: the pipeline stages' breakdowns (empty without a pipeline);
// `bubble_ideal` the closed form's (p - 1) / (m v).
WhySlow why_slow(const config::Scenario& scenario, const workload::Graph& critical_graph,
                 const engine::RankRun& critical_run, double start_s, double end_s,
                 const Breakdown& breakdown, const std::vector<StageBreakdown>& stages, double bubble_ideal,
                 double peak_hbm_bytes);

// The section's JSON: "exposed_comm" ({collective, exposed_s, fraction}), "kernels" ({label, busy_s,
// flops, bytes, roofline_s, bound: compute or memory, efficiency = roofline / busy}), "bubble"
// ({simulated_s, fraction, ideal_fraction, and stage_compute_spread_s, heaviest_stage, lightest_stage
// with a spread}), "memory" ({free_bytes, free_fraction}) and "changes" when set.
nlohmann::json to_json(const WhySlow& why);

// The "why" section of the run table (with the changes when set).
std::string render_why_slow(const WhySlow& why, double iteration_s);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_WHY_SLOW_H_
