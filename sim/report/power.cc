#include "sim/report/power.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

namespace trainsim::report {
namespace {

using nlohmann::json;
using workload::OpKind;

// The state an op holds its GPU in while it runs; nullopt for ops that hold it in none (host
// synchronisation and bookkeeping).
std::optional<GpuState> state_of(const workload::Op& op) {
  switch (op.kind) {
    case OpKind::kGemm:
    case OpKind::kAttentionForward:
    case OpKind::kAttentionBackward:
      return GpuState::kCompute;
    case OpKind::kMemory:
    case OpKind::kOptimizerStep:
      return GpuState::kMemory;
    case OpKind::kCollective:
    case OpKind::kSend:
    case OpKind::kRecv:
    case OpKind::kCopy:
      return GpuState::kCommunication;
    default:
      return std::nullopt;
  }
}

// How many ranks of the world each simulated rank stands for: its symmetry class's members over the
// simulated ranks of that class (1 in a full run).
std::vector<double> rank_weights(const engine::ScenarioRun& run) {
  const std::vector<workload::SymmetryClass> classes = run.plan.symmetry_classes();
  std::vector<int64_t> simulated(classes.size(), 0);
  for (const int64_t rank : run.ranks) ++simulated[static_cast<size_t>(run.plan.class_of(rank))];
  std::vector<double> weights;
  for (const int64_t rank : run.ranks) {
    const auto c = static_cast<size_t>(run.plan.class_of(rank));
    weights.push_back(static_cast<double>(classes[c].size) / static_cast<double>(simulated[c]));
  }
  return weights;
}

// "612 W", "12.3 kW", "1.23 MW".
std::string watts(double w) {
  if (w >= 1e6) return fmt::format("{:.3g} MW", w / 1e6);
  if (w >= 1e3) return fmt::format("{:.3g} kW", w / 1e3);
  return fmt::format("{:.0f} W", w);
}

// "845 J", "12.3 kJ", "4.56 MJ", "7.89 GJ".
std::string joules(double j) {
  if (j >= 1e9) return fmt::format("{:.3g} GJ", j / 1e9);
  if (j >= 1e6) return fmt::format("{:.3g} MJ", j / 1e6);
  if (j >= 1e3) return fmt::format("{:.3g} kJ", j / 1e3);
  return fmt::format("{:.3g} J", j);
}

}  // namespace

std::vector<PowerSpan> gpu_states(const workload::Graph& graph, const engine::RankRun& run, double start_s,
                                  double end_s) {
  // Sweep the ops' intervals (clipped to the window): at each instant the highest state held wins.
  std::vector<std::pair<double, int>> events;  // (time, +-(state + 1))
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    const workload::Op& op = graph.op(id);
    const std::optional<GpuState> state = state_of(op);
    if (!state) continue;
    if (*state != GpuState::kCommunication && !workload::compute_stream(op.stream)) continue;
    const double begin = std::max(run.launch_s[id], start_s);
    const double end = std::min(run.end_s[id], end_s);
    if (!(end > begin)) continue;
    const int level = static_cast<int>(*state) + 1;
    events.emplace_back(begin, level);
    events.emplace_back(end, -level);
  }
  std::sort(events.begin(), events.end());
  std::array<int, kGpuStateCount> held{};
  std::vector<PowerSpan> spans;
  const auto current = [&held] {
    for (int s = kGpuStateCount - 1; s > 0; --s) {
      if (held[static_cast<size_t>(s)] > 0) return static_cast<GpuState>(s);
    }
    return GpuState::kIdle;
  };
  double cursor = start_s;
  for (size_t i = 0; i < events.size();) {
    const double t = events[i].first;
    const GpuState before = current();
    for (; i < events.size() && events[i].first == t; ++i) {
      const int level = events[i].second;
      held[static_cast<size_t>(std::abs(level) - 1)] += level > 0 ? 1 : -1;
    }
    if (current() == before || t <= cursor) continue;
    spans.push_back({cursor, t, before});
    cursor = t;
  }
  if (end_s > cursor) spans.push_back({cursor, end_s, current()});
  return spans;  // a span ends only where the state changes, so neighbours differ
}

double state_power_w(const config::GpuPower& power, GpuState state) {
  switch (state) {
    case GpuState::kCompute:
      return power.compute_w;
    case GpuState::kMemory:
      return power.memory_w;
    case GpuState::kCommunication:
      return power.communication_w;
    case GpuState::kIdle:
      return power.idle_w;
  }
  return power.idle_w;
}

json power_report(const config::Scenario& scenario, const engine::ScenarioRun& run) {
  if (!scenario.cluster.hardware.power) return nullptr;
  const config::GpuPower& power = *scenario.cluster.hardware.power;
  const engine::EngineResult& r = run.result;
  const double t = r.iteration_time_s;
  const double start_s = r.total_time_s - t;
  const int64_t gpus = run.plan.world_size();
  const int64_t per_node = std::max<int64_t>(1, scenario.cluster.topology.node.gpus);
  const int64_t nodes = (gpus + per_node - 1) / per_node;
  const double other_w = static_cast<double>(nodes) * scenario.cluster.topology.node.other_power_w;

  // The cluster's GPU power as steps (time, change in W), and the GPU-time in each state.
  const std::vector<double> weights = rank_weights(run);
  std::vector<std::pair<double, double>> steps;
  std::array<double, kGpuStateCount> state_s{};
  for (size_t i = 0; i < run.ranks.size(); ++i) {
    for (const PowerSpan& span : gpu_states(run.graphs[i], r.ranks[i], start_s, r.total_time_s)) {
      const double w = weights[i] * state_power_w(power, span.state);
      steps.emplace_back(span.start_s, w);
      steps.emplace_back(span.end_s, -w);
      state_s[static_cast<size_t>(span.state)] += weights[i] * (span.end_s - span.start_s);
    }
  }
  // In time order; the changes of one instant in the order they were made, summed before the level.
  std::stable_sort(steps.begin(), steps.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // The GPUs' cumulative energy at each step, and at any instant by interpolation (it grows linearly
  // between steps).
  std::vector<std::pair<double, double>> cumulative;  // (time, J since the iteration's start)
  double level_w = 0;
  double energy_j = 0;
  for (size_t i = 0; i < steps.size();) {
    const double time = steps[i].first;
    double change_w = 0;
    for (; i < steps.size() && steps[i].first == time; ++i) change_w += steps[i].second;
    if (!cumulative.empty()) energy_j += level_w * (time - cumulative.back().first);
    cumulative.emplace_back(time, energy_j);
    level_w += change_w;
  }
  const auto energy_until = [&cumulative](double time) {
    const auto after = std::lower_bound(cumulative.begin(), cumulative.end(), std::pair{time, 0.0},
                                        [](const auto& a, const auto& b) { return a.first < b.first; });
    if (after == cumulative.begin()) return after->second;
    if (after == cumulative.end()) return cumulative.back().second;
    const auto before = std::prev(after);
    return before->second +
           (after->second - before->second) * (time - before->first) / (after->first - before->first);
  };
  // Window averages: n equal windows of about kPowerWindowS over the iteration.
  const auto windows = static_cast<size_t>(std::max(1.0, std::round(t / kPowerWindowS)));
  const double window_s = t / static_cast<double>(windows);
  std::vector<double> window_j(windows, 0.0);
  for (size_t w = 0; w < windows; ++w) {
    const double end = w + 1 == windows ? r.total_time_s : start_s + static_cast<double>(w + 1) * window_s;
    window_j[w] = energy_until(end) - energy_until(start_s + static_cast<double>(w) * window_s);
  }
  double peak_w = 0;
  double trough_w = std::numeric_limits<double>::infinity();
  double ramp_w_per_s = 0;
  for (size_t w = 0; w < windows; ++w) {
    const double mean = window_j[w] / window_s + other_w;
    peak_w = std::max(peak_w, mean);
    trough_w = std::min(trough_w, mean);
    if (w > 0) {
      ramp_w_per_s = std::max(ramp_w_per_s, std::abs(window_j[w] - window_j[w - 1]) / window_s / window_s);
    }
  }
  const double gpu_time_s = static_cast<double>(gpus) * t;
  const double it_mean_w = energy_j / t + other_w;
  const auto tokens = static_cast<double>(scenario.training.global_batch * scenario.model.seq_len);
  json fractions = json::object();
  for (const auto& [state, name] :
       {std::pair{GpuState::kCompute, "compute"}, std::pair{GpuState::kMemory, "memory"},
        std::pair{GpuState::kCommunication, "communication"}, std::pair{GpuState::kIdle, "idle"}}) {
    fractions[name] = state_s[static_cast<size_t>(state)] / gpu_time_s;
  }
  return {{"window_s", window_s},
          {"gpus", gpus},
          {"nodes", nodes},
          {"node_other_power_w", scenario.cluster.topology.node.other_power_w},
          {"pue", scenario.cluster.facility.pue},
          {"gpu_limit_w", power.limit_w},
          {"gpu_mean_w", energy_j / gpu_time_s},
          {"gpu_state_fraction", fractions},
          {"it_mean_w", it_mean_w},
          {"it_peak_w", peak_w},
          {"it_trough_w", trough_w},
          {"it_ramp_w_per_s", ramp_w_per_s},
          {"it_idle_w", static_cast<double>(gpus) * power.idle_w + other_w},
          {"it_nameplate_w", static_cast<double>(gpus) * power.limit_w + other_w},
          {"facility_mean_w", it_mean_w * scenario.cluster.facility.pue},
          {"energy_per_iteration_j", it_mean_w * t},
          {"energy_per_token_j", it_mean_w * t / tokens}};
}

std::string render_power(const json& p) {
  const json& f = p.at("gpu_state_fraction");
  const double other_w = p.at("node_other_power_w").get<double>();
  std::string out = "\n# power (each GPU's draw follows its state in the simulated iteration)\n";
  out += fmt::format(
      "{:<26} {:>14}   of {} limit; GPU-time: compute {:.1f}%, memory-bound {:.1f}%, "
      "communication {:.1f}%, idle {:.1f}%\n",
      "GPU mean", watts(p.at("gpu_mean_w").get<double>()), watts(p.at("gpu_limit_w").get<double>()),
      100 * f.at("compute").get<double>(), 100 * f.at("memory").get<double>(),
      100 * f.at("communication").get<double>(), 100 * f.at("idle").get<double>());
  out += fmt::format(
      "{:<26} {:>14}   ({} GPUs{})\n", "IT power, mean", watts(p.at("it_mean_w").get<double>()),
      p.at("gpus").get<int64_t>(),
      other_w > 0
          ? fmt::format(" + {} nodes at {} besides their GPUs", p.at("nodes").get<int64_t>(), watts(other_w))
          : "; the topology gives no node.other_power, so the nodes' CPUs, NICs and fans "
            "are not counted");
  out += fmt::format("{:<26} {:>14}   trough {} ({:.2g} s windows); fastest ramp {}/s\n", "IT power, peak",
                     watts(p.at("it_peak_w").get<double>()), watts(p.at("it_trough_w").get<double>()),
                     p.at("window_s").get<double>(), watts(p.at("it_ramp_w_per_s").get<double>()));
  out += fmt::format("{:<26} {:>14}   (every GPU idle: checkpoints, restarts); nameplate {}\n",
                     "IT power, stopped", watts(p.at("it_idle_w").get<double>()),
                     watts(p.at("it_nameplate_w").get<double>()));
  const double pue = p.at("pue").get<double>();
  out += fmt::format("{:<26} {:>14}   (PUE {:.2f}{})\n", "facility power, mean",
                     watts(p.at("facility_mean_w").get<double>()), pue,
                     pue == 1 ? ": cluster.facility.pue unset, cooling and power delivery not counted" : "");
  out += fmt::format("{:<26} {:>14}   ({:.3g} J per token, IT)\n", "energy per iteration",
                     joules(p.at("energy_per_iteration_j").get<double>()),
                     p.at("energy_per_token_j").get<double>());
  return out;
}

}  // namespace trainsim::report
