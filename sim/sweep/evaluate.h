// Evaluating one point of a sweep: its scenario (the base with the point's overrides) simulated, or
// estimated in closed form, as one result object. A simulated result is the object `trainsim run
// --format json` prints for the same scenario and options; a closed-form one has the same keys where
// the estimate has the number. Both add
//   point   {index, id, values: {axis name: value}}
//   mode    "simulated" | "analytic"
//   status  "ok" | "infeasible" (does not fit in memory) | "invalid" (the point's scenario or plan
//           is invalid) | "failed" (the evaluation crashed or ran out of time)
//   reason  why, when status is not "ok" ("" otherwise); files in it are named relative to the sweep
//           file's directory
// A point's own problems are results, never exceptions.
#ifndef TRAINSIM_SIM_SWEEP_EVALUATE_H_
#define TRAINSIM_SIM_SWEEP_EVALUATE_H_

#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine/scenario_run.h"
#include "sim/sweep/expand.h"
#include "sim/sweep/sweep_file.h"

namespace trainsim::sweep {

enum class Mode {
  kSimulate,  // the engine (one simulation per process: evaluate in a forked child)
  kAnalytic,  // the closed-form estimate (sim/estimate/iteration_time.h)
};

struct EvaluateOptions {
  Mode mode = Mode::kSimulate;
  engine::NetworkModel network = engine::NetworkModel::kSimgrid;
  // Simulate every rank instead of one per symmetry class (kSimulate only): the traffic of every
  // replica then shares the fabric, which a what-if on it (tapering, ECMP) needs to show.
  bool full = false;
  // One rank per symmetry class with every rank's traffic on the network (kSimulate only; `trainsim run
  // --all-traffic`, engine::MirrorMode::kCoupled): the same what-ifs at a fraction of full's cost.
  bool all_traffic = false;
};

// "simulated" / "analytic".
std::string mode_name(Mode mode);

// Evaluates `point`. In simulation mode it runs the process's one SimGrid simulation.
nlohmann::json evaluate_point(const SweepFile& sweep, const Point& point, const EvaluateOptions& options);

// The result of a point whose evaluation ended without one (a crash, a time limit).
nlohmann::json failed_result(const Point& point, const EvaluateOptions& options, const std::string& reason);

// The `trainsim run` command that reproduces a simulated point, as its provenance records it.
std::string run_command(const SweepFile& sweep, const Point& point, const EvaluateOptions& options);

}  // namespace trainsim::sweep

#endif  // TRAINSIM_SIM_SWEEP_EVALUATE_H_
