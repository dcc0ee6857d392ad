// The output of `trainsim search`: one JSON object, and the table rendered from the same result.
#ifndef TRAINSIM_SIM_SEARCH_REPORT_H_
#define TRAINSIM_SIM_SEARCH_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/search/search.h"

namespace trainsim::search {

// {schema_version, provenance, search (options), counts, invalid_by_rule, failures, timing,
// closed_form {ratio_min, ratio_max, spread}, best: [{rank, plan, description, overrides,
// closed_form_s, memory_bound_bytes, iteration_time_s, tokens_per_s, tflops_per_gpu, mfu, hfu,
// breakdown, memory, cost (with a price), warnings, scenario_yaml}]}. Everything but `timing` and
// the command line in `provenance` is the same for the same inputs, whatever --jobs.
nlohmann::json to_json(const SearchResult& result);

// Counts, timing, invalid plans by rule, the best plans with their breakdowns and the command that
// reproduces the best one. `scenario_path` is the scenario as the user named it, `user_overrides`
// the --set arguments the search was given (the command repeats them before the plan's).
std::string render_table(const SearchResult& result, const std::string& scenario_path,
                         const std::vector<std::string>& user_overrides = {});

}  // namespace trainsim::search

#endif  // TRAINSIM_SIM_SEARCH_REPORT_H_
