// The changes of plan that would help a simulated run most, as the closed-form estimate predicts them:
// the plans one step away from the scenario's (micro-batch, tensor and pipeline degrees doubled or
// halved against the data-parallel degree, the other recomputation modes and ZeRO stages, an
// interleaved schedule, Megatron sequence parallelism), each checked by the scenario decoder like a
// search candidate, estimated (estimate/iteration_time.h) and scaled by the simulated-to-estimated
// ratio of the scenario itself, the estimates on up to one thread per core. `trainsim run` puts the
// best in its "why" section.
#ifndef TRAINSIM_SIM_SEARCH_ADVICE_H_
#define TRAINSIM_SIM_SEARCH_ADVICE_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"

namespace trainsim::search {

struct PlanChange {
  std::string change;           // the --set arguments that make it, space-separated
  double estimated_s = 0;       // the closed-form estimate of the changed plan
  double predicted_s = 0;       // estimated_s x (simulated / estimated) of the scenario's own plan
  double predicted_change = 0;  // predicted_s / simulated_s - 1 (negative: faster)
  double peak_hbm_bytes = 0;    // the estimate's memory peak (the changed plan fits)
};

// At most `top` changes whose plans fit in memory and are predicted faster than `simulated_s` by more
// than 1 %, fastest first, one of each set the estimate cannot tell apart. `scenario` obeys the plan
// rules (it ran).
std::vector<PlanChange> advise(const config::Scenario& scenario, double simulated_s, size_t top);

nlohmann::json to_json(const std::vector<PlanChange>& changes);

}  // namespace trainsim::search

#endif  // TRAINSIM_SIM_SEARCH_ADVICE_H_
