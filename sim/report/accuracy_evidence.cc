#include "sim/report/accuracy_evidence.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace trainsim::report {

nlohmann::json to_json(const AccuracyRow& row) {
  return {{"framework", row.framework},
          {"gpu", row.gpu},
          {"gpus", row.gpus},
          {"role", row.role},
          {"cases", row.cases},
          {"median_abs_error", row.median_abs_error},
          {"max_abs_error", row.max_abs_error},
          {"simulated_faster", row.simulated_faster},
          {"suites", row.suites}};
}

nlohmann::json to_json(const AccuracyEvidence& evidence) {
  nlohmann::json rows = nlohmann::json::array();
  for (const AccuracyRow& row : evidence.rows) rows.push_back(to_json(row));
  nlohmann::json out = {
      {"framework", evidence.framework}, {"gpu", evidence.gpu}, {"gpus", evidence.gpus}, {"rows", rows}};
  if (evidence.nearest_gpus) out["nearest_gpus"] = *evidence.nearest_gpus;
  return out;
}

std::string render_accuracy(const AccuracyEvidence& a) {
  if (a.rows.empty()) {
    return fmt::format("# accuracy: no published run on {} is in trainsim's validation\n", a.gpu);
  }
  std::string out =
      fmt::format("# accuracy: published runs on {} at {} GPUs{}, as trainsim validate reproduces them:\n",
                  a.gpu, a.nearest_gpus.value_or(a.gpus),
                  a.nearest_gpus ? fmt::format(" (none at this run's {} GPUs)", a.gpus) : "");
  for (const AccuracyRow& row : a.rows) {
    out += fmt::format(
        "#   {:<19} {:>3} {} case{} ({}): median |error| {:.1f}% (max {:.1f}%), {} simulated faster{}\n",
        row.framework, row.cases, row.role, row.cases == 1 ? "" : "s", fmt::join(row.suites, ", "),
        100 * row.median_abs_error, 100 * row.max_abs_error, row.simulated_faster,
        a.framework != "generic" && row.framework == a.framework ? "  <- this run's framework" : "");
  }
  return out;
}

}  // namespace trainsim::report
