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
std::vector<KernelClassTime> kernel_classes(const config::Scenario& s, const workload::Graph& graph,
                                            const engine::RankRun& run, double start_s, double end_s) {
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
  std::vector<KernelClassTime> out;
  for (const auto& [label, c] : classes) {
    out.push_back(
        {label, c.busy_s, c.flops, c.bytes, std::max(c.compute_s, c.memory_s), c.compute_s >= c.memory_s});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelClassTime& x, const KernelClassTime& y) { return x.busy_s > y.busy_s; });
  return out;
}

}  // namespace

WhySlow why_slow(const config::Scenario& s, const workload::Graph& critical_graph,
                 const engine::RankRun& critical_run, double start_s, double end_s, const Breakdown& b,
                 const std::vector<StageBreakdown>& stages, double bubble_ideal, double peak_hbm_bytes) {
  const double iteration_s = end_s - start_s;
  WhySlow out;
  for (const auto& [collective, seconds] : b.exposed_comm_by_collective_s) {
    out.exposed_comm.push_back({collective, seconds, seconds / iteration_s});
  }
  std::stable_sort(
      out.exposed_comm.begin(), out.exposed_comm.end(),
      [](const ExposedCollective& x, const ExposedCollective& y) { return x.exposed_s > y.exposed_s; });
  out.kernels = kernel_classes(s, critical_graph, critical_run, start_s, end_s);
  out.bubble = {b.bubble_s, b.bubble_s / iteration_s, bubble_ideal, std::nullopt};
  if (stages.size() > 1) {
    const auto by_compute = [](const StageBreakdown& x, const StageBreakdown& y) {
      return x.breakdown.compute_s < y.breakdown.compute_s;
    };
    const StageBreakdown& lightest = *std::min_element(stages.begin(), stages.end(), by_compute);
    const StageBreakdown& heaviest = *std::max_element(stages.begin(), stages.end(), by_compute);
    out.bubble.spread = {heaviest.breakdown.compute_s - lightest.breakdown.compute_s, heaviest.stage,
                         lightest.stage};
  }
  const double usable = s.usable_hbm_bytes();
  out.free_hbm_bytes = usable - peak_hbm_bytes;
  out.free_hbm_fraction = out.free_hbm_bytes / usable;
  return out;
}

json to_json(const WhySlow& why) {
  json comm = json::array();
  for (const ExposedCollective& c : why.exposed_comm) {
    comm.push_back({{"collective", c.collective}, {"exposed_s", c.exposed_s}, {"fraction", c.fraction}});
  }
  json kernels = json::array();
  for (const KernelClassTime& k : why.kernels) {
    kernels.push_back({{"label", k.label},
                       {"busy_s", k.busy_s},
                       {"flops", k.flops},
                       {"bytes", k.bytes},
                       {"roofline_s", k.roofline_s},
                       {"bound", k.compute_bound ? "compute" : "memory"},
                       {"efficiency", k.efficiency()}});
  }
  const BubbleAnalysis& b = why.bubble;
  json bubble = {
      {"simulated_s", b.simulated_s}, {"fraction", b.fraction}, {"ideal_fraction", b.ideal_fraction}};
  if (b.spread) {
    bubble["stage_compute_spread_s"] = b.spread->compute_s;
    bubble["heaviest_stage"] = b.spread->heaviest_stage;
    bubble["lightest_stage"] = b.spread->lightest_stage;
  }
  json out = {{"exposed_comm", comm},
              {"kernels", kernels},
              {"bubble", bubble},
              {"memory", {{"free_bytes", why.free_hbm_bytes}, {"free_fraction", why.free_hbm_fraction}}}};
  if (!why.changes.is_null()) out["changes"] = why.changes;
  return out;
}

std::string render_why_slow(const WhySlow& why, double iteration_s) {
  const auto percent = [&](double seconds) { return iteration_s > 0 ? 100 * seconds / iteration_s : 0.0; };
  std::string out = "\n# why: where the critical rank's time goes beyond ideal kernels\n";
  if (!why.exposed_comm.empty()) {
    out += "exposed communication, by collective and group:\n";
    for (size_t i = 0; i < std::min<size_t>(why.exposed_comm.size(), 5); ++i) {
      const ExposedCollective& c = why.exposed_comm[i];
      out += fmt::format("  {:<24} {:>14.6f} s {:>6.1f}%\n", c.collective, c.exposed_s, percent(c.exposed_s));
    }
  }
  out += "kernels against their roofline (the dtype's dense peak, the HBM bandwidth), longest first:\n";
  for (size_t i = 0; i < std::min<size_t>(why.kernels.size(), 6); ++i) {
    const KernelClassTime& k = why.kernels[i];
    out += fmt::format("  {:<24} {:>14.6f} s {:>6.1f}%   {:>5.1f}% of its roofline ({}-bound)\n", k.label,
                       k.busy_s, percent(k.busy_s), 100 * k.efficiency(),
                       k.compute_bound ? "compute" : "memory");
  }
  const BubbleAnalysis& bubble = why.bubble;
  if (bubble.simulated_s > 0) {
    out += fmt::format("{:<26} {:>14.6f} s {:>6.1f}%   the schedule's ideal (p - 1) / (m v) is {:.1f}%",
                       "pipeline bubble", bubble.simulated_s, percent(bubble.simulated_s),
                       100 * bubble.ideal_fraction);
    if (bubble.spread) {
      out += fmt::format(
          "; the stages' compute differs by {:.4f} s (stage {} heaviest, stage {} lightest), which the "
          "others "
          "wait out, and every micro-batch's sends between stages lengthen the fill and drain",
          bubble.spread->compute_s, bubble.spread->heaviest_stage, bubble.spread->lightest_stage);
    }
    out += "\n";
  }
  out += fmt::format(
      "{:<26} {:>11.2f} GiB free under the usable HBM ({:.1f}%){}\n", "memory",
      why.free_hbm_bytes / config::kBytesPerGiB, 100 * why.free_hbm_fraction,
      why.free_hbm_fraction < 0.1 ? ": little room for a larger micro-batch or fewer recomputations" : "");
  if (!why.changes.is_null()) {
    if (why.changes.empty()) {
      out += "changes: none of the neighbouring plans is predicted faster (closed-form estimate)\n";
    } else {
      out += "changes the closed-form estimate predicts would help most (scaled to this run's time):\n";
      for (const json& c : why.changes) {
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
