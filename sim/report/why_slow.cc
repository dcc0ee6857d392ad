#include "sim/report/why_slow.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "sim/config/units.h"

namespace trainsim::report {
namespace {

using json = nlohmann::json;

struct KernelClass {
  double busy_s = 0, flops = 0, bytes = 0, compute_s = 0, memory_s = 0;
};

// The critical rank's compute-stream kernels over [start_s, end_s], per op label.
json kernel_classes(const config::Scenario& s, const workload::Graph& graph, const engine::RankRun& run,
                    double start_s, double end_s) {
  const config::HardwareProfile& hw = s.cluster.hardware;
  const double training_peak = hw.peak_flops_per_s(s.training.dtype).value_or(0);
  std::map<std::string, KernelClass> classes;
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    const workload::Op& op = graph.op(id);
    if (!workload::is_kernel(op.kind) || !workload::compute_stream(op.stream)) continue;
    const double busy = std::min(run.end_s[id], end_s) - std::max(run.launch_s[id], start_s);
    if (busy <= 0) continue;
    // The share of the op inside the window (an op straddling the iteration's start counts in part).
    const double share = busy / std::max(run.end_s[id] - run.launch_s[id], 1e-30);
    KernelClass& c = classes[std::string(workload::to_string(op.label))];
    const double peak = hw.peak_flops_per_s(op.dtype).value_or(training_peak);
    c.busy_s += busy;
    c.flops += share * op.flops;
    c.bytes += share * op.bytes;
    if (peak > 0) c.compute_s += share * op.flops / peak;
    if (hw.gpu.hbm_bandwidth_bytes_per_s > 0)
      c.memory_s += share * op.bytes / hw.gpu.hbm_bandwidth_bytes_per_s;
  }
  json out = json::array();
  for (const auto& [label, c] : classes) {
    const double roofline = std::max(c.compute_s, c.memory_s);
    out.push_back({{"label", label},
                   {"busy_s", c.busy_s},
                   {"flops", c.flops},
                   {"bytes", c.bytes},
                   {"roofline_s", roofline},
                   {"bound", c.compute_s >= c.memory_s ? "compute" : "memory"},
                   {"efficiency", roofline / c.busy_s}});
  }
  std::sort(out.begin(), out.end(), [](const json& x, const json& y) {
    return x.at("busy_s").get<double>() > y.at("busy_s").get<double>();
  });
  return out;
}

}  // namespace

json why_slow(const config::Scenario& s, const workload::Graph& critical_graph,
              const engine::RankRun& critical_run, double start_s, double end_s, const Breakdown& b,
              const std::vector<StageBreakdown>& stages, double bubble_ideal, double peak_hbm_bytes) {
  const double iteration_s = end_s - start_s;
  std::vector<std::pair<std::string, double>> exposed(b.exposed_comm_by_collective_s.begin(),
                                                      b.exposed_comm_by_collective_s.end());
  std::sort(exposed.begin(), exposed.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  json comm = json::array();
  for (const auto& [collective, seconds] : exposed) {
    comm.push_back({{"collective", collective}, {"exposed_s", seconds}, {"fraction", seconds / iteration_s}});
  }
  json bubble = {
      {"simulated_s", b.bubble_s}, {"fraction", b.bubble_s / iteration_s}, {"ideal_fraction", bubble_ideal}};
  if (stages.size() > 1) {
    const auto by_compute = [](const StageBreakdown& x, const StageBreakdown& y) {
      return x.breakdown.compute_s < y.breakdown.compute_s;
    };
    const StageBreakdown& lightest = *std::min_element(stages.begin(), stages.end(), by_compute);
    const StageBreakdown& heaviest = *std::max_element(stages.begin(), stages.end(), by_compute);
    bubble["stage_compute_spread_s"] = heaviest.breakdown.compute_s - lightest.breakdown.compute_s;
    bubble["heaviest_stage"] = heaviest.stage;
    bubble["lightest_stage"] = lightest.stage;
  }
  const double usable = s.usable_hbm_bytes();
  return {{"exposed_comm", comm},
          {"kernels", kernel_classes(s, critical_graph, critical_run, start_s, end_s)},
          {"bubble", bubble},
          {"memory",
           {{"free_bytes", usable - peak_hbm_bytes}, {"free_fraction", (usable - peak_hbm_bytes) / usable}}}};
}

std::string render_why_slow(const json& why, double iteration_s) {
  const auto percent = [&](double seconds) { return iteration_s > 0 ? 100 * seconds / iteration_s : 0.0; };
  std::string out = "\n# why: where the critical rank's time goes beyond ideal kernels\n";
  const json& comm = why.at("exposed_comm");
  if (!comm.empty()) {
    out += "exposed communication, by collective and group:\n";
    for (size_t i = 0; i < std::min<size_t>(comm.size(), 5); ++i) {
      const double seconds = comm[i].at("exposed_s").get<double>();
      out += fmt::format("  {:<24} {:>14.6f} s {:>6.1f}%\n", comm[i].at("collective").get<std::string>(),
                         seconds, percent(seconds));
    }
  }
  out += "kernels against their roofline (the dtype's dense peak, the HBM bandwidth), longest first:\n";
  const json& kernels = why.at("kernels");
  for (size_t i = 0; i < std::min<size_t>(kernels.size(), 6); ++i) {
    const json& k = kernels[i];
    const double busy = k.at("busy_s").get<double>();
    out += fmt::format("  {:<24} {:>14.6f} s {:>6.1f}%   {:>5.1f}% of its roofline ({}-bound)\n",
                       k.at("label").get<std::string>(), busy, percent(busy),
                       100 * k.at("efficiency").get<double>(), k.at("bound").get<std::string>());
  }
  const json& bubble = why.at("bubble");
  const double bubble_s = bubble.at("simulated_s").get<double>();
  if (bubble_s > 0) {
    out += fmt::format("{:<26} {:>14.6f} s {:>6.1f}%   the schedule's ideal (p - 1) / (m v) is {:.1f}%",
                       "pipeline bubble", bubble_s, percent(bubble_s),
                       100 * bubble.at("ideal_fraction").get<double>());
    if (bubble.contains("stage_compute_spread_s")) {
      out += fmt::format(
          "; the stages' compute differs by {:.4f} s (stage {} heaviest, stage {} lightest), which the "
          "others "
          "wait out, and every micro-batch's sends between stages lengthen the fill and drain",
          bubble.at("stage_compute_spread_s").get<double>(), bubble.at("heaviest_stage").get<int64_t>(),
          bubble.at("lightest_stage").get<int64_t>());
    }
    out += "\n";
  }
  const json& memory = why.at("memory");
  out += fmt::format("{:<26} {:>11.2f} GiB free under the usable HBM ({:.1f}%){}\n", "memory",
                     memory.at("free_bytes").get<double>() / config::kBytesPerGiB,
                     100 * memory.at("free_fraction").get<double>(),
                     memory.at("free_fraction").get<double>() < 0.1
                         ? ": little room for a larger micro-batch or "
                           "fewer recomputations"
                         : "");
  if (why.contains("changes")) {
    const json& changes = why.at("changes");
    if (changes.empty()) {
      out += "changes: none of the neighbouring plans is predicted faster (closed-form estimate)\n";
    } else {
      out += "changes the closed-form estimate predicts would help most (scaled to this run's time):\n";
      for (const json& c : changes) {
        out += fmt::format("  {:<56} {:>12.6g} s {:>+6.1f}%   (estimate {:.6g} s, peak {:.2f} GiB)\n",
                           c.at("change").get<std::string>(), c.at("predicted_s").get<double>(),
                           100 * c.at("predicted_change").get<double>(), c.at("estimated_s").get<double>(),
                           c.at("peak_hbm_bytes").get<double>() / config::kBytesPerGiB);
      }
    }
  }
  return out;
}

}  // namespace trainsim::report
