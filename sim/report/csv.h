// The metrics of a run report as CSV: the row `trainsim run --format csv` prints, and the metric
// columns a sweep's results.csv has after its point columns. One list of columns for both.
#ifndef TRAINSIM_SIM_REPORT_CSV_H_
#define TRAINSIM_SIM_REPORT_CSV_H_

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::report {

// (column, JSON pointer into a run report), units in the column names. A value the report does not
// have (no campaign, no power) is an empty field.
const std::vector<std::pair<std::string, std::string>>& metric_columns();

// The value at the JSON `pointer` in `object`; null when it is absent.
nlohmann::json value_at(const nlohmann::json& object, const std::string& pointer);

// `value` as one CSV field: null empty, strings quoted when they hold a comma, quote or line break.
std::string csv_value(const nlohmann::json& value);

// The header line of metric_columns() and the row of `report`.
std::string metrics_csv(const nlohmann::json& report);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_CSV_H_
