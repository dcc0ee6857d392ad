#include "sim/report/csv.h"

#include <fmt/format.h>

namespace trainsim::report {
namespace {

using nlohmann::json;

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out(1, '"');
  for (const char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& metric_columns() {
  static const std::vector<std::pair<std::string, std::string>> columns = {
      {"scenario", "/scenario"},
      {"gpus", "/gpus"},
      {"iteration_time_s", "/iteration_time_s"},
      {"tokens_per_s", "/tokens_per_s"},
      {"tflops_per_gpu", "/tflops_per_gpu"},
      {"mfu", "/mfu"},
      {"hfu", "/hfu"},
      {"compute_s", "/breakdown/compute_s"},
      {"exposed_comm_s", "/breakdown/exposed_comm_s"},
      {"bubble_s", "/breakdown/bubble_s"},
      {"offload_stall_s", "/breakdown/offload_stall_s"},
      {"idle_s", "/breakdown/idle_s"},
      {"peak_hbm_bytes", "/memory/peak_hbm_bytes"},
      {"hbm_capacity_bytes", "/memory/hbm_capacity_bytes"},
      {"usable_hbm_bytes", "/memory/usable_hbm_bytes"},
      {"peak_host_bytes_per_node", "/memory/peak_host_bytes_per_node"},
      {"fits", "/memory/fits"},
      {"time_to_train_s", "/campaign/wall_time_s"},
      {"goodput", "/campaign/goodput"},
      {"cost_usd", "/campaign/cost_usd"},
      {"gpu_mean_power_w", "/power/gpu_mean_w"},
      {"it_mean_power_w", "/power/it_mean_w"},
      {"energy_per_token_j", "/power/energy_per_token_j"},
      {"energy_j", "/campaign/energy_j"},
      {"electricity_cost_usd", "/campaign/electricity_cost_usd"},
  };
  return columns;
}

json value_at(const json& object, const std::string& pointer) {
  const json::json_pointer p(pointer);
  return object.contains(p) ? object.at(p) : json();
}

std::string csv_value(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  return csv_field(v.dump());
}

std::string metrics_csv(const json& report) {
  std::vector<std::string> header;
  std::vector<std::string> row;
  for (const auto& [column, pointer] : metric_columns()) {
    header.push_back(column);
    row.push_back(csv_value(value_at(report, pointer)));
  }
  return fmt::format("{}\n{}\n", fmt::join(header, ","), fmt::join(row, ","));
}

}  // namespace trainsim::report
