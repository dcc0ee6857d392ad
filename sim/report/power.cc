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
    case OpKind::kHostSync:
    case OpKind::kStreamWait:
    case OpKind::kAlloc:
    case OpKind::kFree:
      return std::nullopt;
  }
  return std::nullopt;
}

// How many ranks of the world each simulated rank stands for: its symmetry class's members (a run
// simulates one rank per class or every rank, so 1 in a full run).
std::vector<int64_t> rank_weights(const engine::ScenarioRun& run) {
  const std::vector<workload::SymmetryClass> classes = run.plan.symmetry_classes();
  std::vector<int64_t> simulated(classes.size(), 0);
  for (const int64_t rank : run.ranks) ++simulated[static_cast<size_t>(run.plan.class_of(rank))];
  std::vector<int64_t> weights;
  for (const int64_t rank : run.ranks) {
    const auto c = static_cast<size_t>(run.plan.class_of(rank));
    weights.push_back(classes[c].size / simulated[c]);
  }
  return weights;
}

// A sum of energies or GPU-times kept as an integer count of `unit`, so that it does not depend on the
// order of its terms: a simulated rank weighted by its class's size and the class's members simulated
// one by one (--full) give the same figures to the last digit. `unit` is the whole (every GPU over
// the iteration at the highest value) over 2^60: the sum stays within 64 bits, each term rounded to
// within 1e-18 of the whole.
class ExactSum {
 public:
  explicit ExactSum(double whole) : unit_(whole > 0 ? whole / 0x1p60 : 1.0) {}
  void add(int64_t weight, double value) { quanta_ += weight * std::llround(value / unit_); }
  double value() const { return static_cast<double>(quanta_) * unit_; }

 private:
  double unit_;
  int64_t quanta_ = 0;
};

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

std::optional<PowerReport> power_report(const config::Scenario& scenario, const engine::ScenarioRun& run) {
  if (!scenario.cluster.hardware.power) return std::nullopt;
  const config::GpuPower& power = *scenario.cluster.hardware.power;
  const engine::EngineResult& r = run.result;
  const double t = r.iteration_time_s;
  const double start_s = r.total_time_s - t;
  const int64_t gpus = run.plan.world_size();
  const int64_t per_node = std::max<int64_t>(1, scenario.cluster.topology.node.gpus);
  const int64_t nodes = (gpus + per_node - 1) / per_node;
  const double other_w = static_cast<double>(nodes) * scenario.cluster.topology.node.other_power_w;

  // Each GPU's energy in n equal windows of about kPowerWindowS over the iteration (each span of a
  // state adds its power times its overlap with each window), and the GPU-time in each state. Rank by
  // rank, so that memory stays at the windows whatever the number of ranks.
  const auto windows = static_cast<size_t>(std::max(1.0, std::round(t / kPowerWindowS)));
  const double window_s = t / static_cast<double>(windows);
  const auto window_start_s = [&](size_t w) {
    return w == windows ? r.total_time_s : start_s + static_cast<double>(w) * window_s;
  };
  const double max_w = std::max({power.compute_w, power.memory_w, power.communication_w, power.idle_w});
  const double gpu_time_s = static_cast<double>(gpus) * t;
  std::vector<ExactSum> window_j(windows, ExactSum(gpu_time_s * max_w));
  std::vector<ExactSum> state_s(kGpuStateCount, ExactSum(gpu_time_s));
  const std::vector<int64_t> weights = rank_weights(run);
  for (size_t i = 0; i < run.ranks.size(); ++i) {
    for (const PowerSpan& span : gpu_states(run.graph(i), r.ranks[i], start_s, r.total_time_s)) {
      const double w = state_power_w(power, span.state);
      state_s[static_cast<size_t>(span.state)].add(weights[i], span.end_s - span.start_s);
      // From the window before the one the span starts in (rounding), to the one it ends in.
      const double first = std::floor((span.start_s - start_s) / window_s) - 1;
      for (auto k = static_cast<size_t>(std::max(0.0, first)); k < windows && window_start_s(k) < span.end_s;
           ++k) {
        const double overlap =
            std::min(span.end_s, window_start_s(k + 1)) - std::max(span.start_s, window_start_s(k));
        if (overlap > 0) window_j[k].add(weights[i], w * overlap);
      }
    }
  }
  double peak_w = 0;
  double trough_w = std::numeric_limits<double>::infinity();
  double ramp_w_per_s = 0;
  for (size_t w = 0; w < windows; ++w) {
    const double mean = window_j[w].value() / window_s + other_w;
    peak_w = std::max(peak_w, mean);
    trough_w = std::min(trough_w, mean);
    if (w > 0) {
      ramp_w_per_s = std::max(ramp_w_per_s,
                              std::abs(window_j[w].value() - window_j[w - 1].value()) / window_s / window_s);
    }
  }
  // The GPUs' energy: each state's GPU-time at its power.
  double energy_j = 0;
  for (int s = 0; s < kGpuStateCount; ++s) {
    energy_j += state_power_w(power, static_cast<GpuState>(s)) * state_s[static_cast<size_t>(s)].value();
  }
  const double it_mean_w = energy_j / t + other_w;
  const auto tokens = static_cast<double>(scenario.training.global_batch * scenario.model.seq_len);
  PowerReport out;
  out.window_s = window_s;
  out.gpus = gpus;
  out.nodes = nodes;
  out.node_other_power_w = scenario.cluster.topology.node.other_power_w;
  out.pue = scenario.cluster.facility.pue;
  out.gpu_limit_w = power.limit_w;
  out.gpu_mean_w = energy_j / gpu_time_s;
  for (size_t s = 0; s < out.state_fraction.size(); ++s) {
    out.state_fraction[s] = state_s[s].value() / gpu_time_s;
  }
  out.it_mean_w = it_mean_w;
  out.it_peak_w = peak_w;
  out.it_trough_w = trough_w;
  out.it_ramp_w_per_s = ramp_w_per_s;
  out.it_idle_w = static_cast<double>(gpus) * power.idle_w + other_w;
  out.it_nameplate_w = static_cast<double>(gpus) * power.limit_w + other_w;
  out.facility_mean_w = it_mean_w * scenario.cluster.facility.pue;
  out.energy_per_iteration_j = it_mean_w * t;
  out.energy_per_token_j = it_mean_w * t / tokens;
  return out;
}

json to_json(const PowerReport& p) {
  const auto fraction = [&](GpuState s) { return p.state_fraction[static_cast<size_t>(s)]; };
  return {{"window_s", p.window_s},
          {"gpus", p.gpus},
          {"nodes", p.nodes},
          {"node_other_power_w", p.node_other_power_w},
          {"pue", p.pue},
          {"gpu_limit_w", p.gpu_limit_w},
          {"gpu_mean_w", p.gpu_mean_w},
          {"gpu_state_fraction",
           {{"compute", fraction(GpuState::kCompute)},
            {"memory", fraction(GpuState::kMemory)},
            {"communication", fraction(GpuState::kCommunication)},
            {"idle", fraction(GpuState::kIdle)}}},
          {"it_mean_w", p.it_mean_w},
          {"it_peak_w", p.it_peak_w},
          {"it_trough_w", p.it_trough_w},
          {"it_ramp_w_per_s", p.it_ramp_w_per_s},
          {"it_idle_w", p.it_idle_w},
          {"it_nameplate_w", p.it_nameplate_w},
          {"facility_mean_w", p.facility_mean_w},
          {"energy_per_iteration_j", p.energy_per_iteration_j},
          {"energy_per_token_j", p.energy_per_token_j}};
}

std::string render_power(const PowerReport& p) {
  const auto percent = [&](GpuState s) { return 100 * p.state_fraction[static_cast<size_t>(s)]; };
  std::string out = "\n# power (each GPU's draw follows its state in the simulated iteration)\n";
  out += fmt::format(
      "{:<26} {:>14}   of {} limit; GPU-time: compute {:.1f}%, memory-bound {:.1f}%, "
      "communication {:.1f}%, idle {:.1f}%\n",
      "GPU mean", watts(p.gpu_mean_w), watts(p.gpu_limit_w), percent(GpuState::kCompute),
      percent(GpuState::kMemory), percent(GpuState::kCommunication), percent(GpuState::kIdle));
  out += fmt::format(
      "{:<26} {:>14}   ({} GPUs{})\n", "IT power, mean", watts(p.it_mean_w), p.gpus,
      p.node_other_power_w > 0
          ? fmt::format(" + {} nodes at {} besides their GPUs", p.nodes, watts(p.node_other_power_w))
          : "; the topology gives no node.other_power, so the nodes' CPUs, NICs and fans "
            "are not counted");
  out += fmt::format("{:<26} {:>14}   trough {} ({:.2g} s windows); fastest ramp {}/s\n", "IT power, peak",
                     watts(p.it_peak_w), watts(p.it_trough_w), p.window_s, watts(p.it_ramp_w_per_s));
  out += fmt::format("{:<26} {:>14}   (every GPU idle: checkpoints, restarts); nameplate {}\n",
                     "IT power, stopped", watts(p.it_idle_w), watts(p.it_nameplate_w));
  out +=
      fmt::format("{:<26} {:>14}   (PUE {:.2f}{})\n", "facility power, mean", watts(p.facility_mean_w), p.pue,
                  p.pue == 1 ? ": cluster.facility.pue unset, cooling and power delivery not counted" : "");
  out += fmt::format("{:<26} {:>14}   ({:.3g} J per token, IT)\n", "energy per iteration",
                     joules(p.energy_per_iteration_j), p.energy_per_token_j);
  return out;
}

}  // namespace trainsim::report
