#include "sim/validate/metrics.h"

#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "sim/config/diagnostics.h"
#include "sim/config/loader.h"
#include "sim/report/run_report.h"
#include "sim/validate/accuracy.h"
#include "sim/validate/case_scenario.h"
#include "sim/validate/comm_study.h"
#include "sim/workload/builder.h"
#include "sim/workload/errors.h"
#include "sim/workload/plan.h"
#include "sim/workload/summary.h"

namespace trainsim::validate {
namespace {

using workload::OpKind;
using workload::Phase;

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Does the plan of `scenario` fit, as the run report judges it, from the graphs' memory timelines.
bool fits(const config::Scenario& scenario) {
  const workload::ParallelPlan plan = workload::make_plan(scenario);
  const std::vector<workload::Graph> graphs = workload::build_class_graphs(scenario, plan);
  const workload::WorkloadSummary summary = workload::summarize(scenario, plan, graphs);
  double hbm = 0;
  for (const workload::ClassSummary& c : summary.classes) hbm = std::max(hbm, c.memory.peak_hbm_bytes);
  return scenario.memory_fits(hbm, summary.peak_host_bytes_per_node);
}

// The scenario of `ref` as `variant` asks for it.
config::Scenario load_variant(const ScenarioRef& ref, const Variant& variant,
                              const YAML::Node& extra = YAML::Node()) {
  config::Scenario s = load_case_scenario(ref, extra);
  std::optional<config::StackProfile>& stack = s.cluster.hardware.stack;
  if (variant.hardware_only) stack.reset();
  if (variant.stack && stack) stack->parameters = *variant.stack;
  return s;
}

Measurement simulate(const Case& c, const config::Scenario& s) {
  engine::RunOptions options;
  options.network =
      c.network == Network::kIdeal ? engine::NetworkModel::kIdeal : engine::NetworkModel::kSimgrid;
  const std::unique_ptr<engine::ScenarioRun> run = engine::run_scenario(s, options);
  const report::RunMetrics metrics = report::run_metrics(s, *run);
  Measurement out;
  if (c.metric == Metric::kLayerForward || c.metric == Metric::kLayerBackward) {
    const LayerTimes layers = layer_times(*run);
    out.simulated = c.metric == Metric::kLayerForward ? layers.forward_s : layers.backward_s;
    out.layers_measured = layers.layers;
  } else {
    out.simulated = run_metric(c.metric, s, metrics);
  }
  out.iteration_time_s = metrics.iteration_time_s;
  out.breakdown = metrics.breakdown;
  out.fits = metrics.memory.fits;
  out.infeasible = report::infeasibility(metrics.memory);
  return out;
}

}  // namespace

double run_metric(Metric metric, const config::Scenario& s, const report::RunMetrics& m) {
  const double peak = *s.cluster.hardware.peak_flops_per_s(s.training.dtype);
  const double t = m.iteration_time_s;
  const auto gpus = static_cast<double>(m.gpus);
  switch (metric) {
    case Metric::kIterationTime:
      return t;
    case Metric::kTokensPerGpu:
      return m.tokens_per_s / gpus;
    case Metric::kTflopsPerGpu:
      return m.tflops_per_gpu;
    case Metric::kHardwareTflopsPerGpu:
      return m.hfu * peak / 1e12;
    case Metric::kMfu:
      return m.mfu;
    case Metric::kHfu:
      return m.hfu;
    case Metric::kExecutedFlopsUtilization:
      return m.executed_flops_utilization;
    case Metric::kMegatronDeepspeedMfu:
      return megatron_deepspeed_flops(s) / (t * gpus * peak);
    case Metric::kMegatronDeepspeedTflops:
      return megatron_deepspeed_flops(s) / (t * gpus) / 1e12;
    default:
      break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double megatron_deepspeed_flops(const config::Scenario& scenario) {
  const config::Model& m = scenario.model;
  const double b = static_cast<double>(scenario.training.global_batch);
  const double s = static_cast<double>(m.seq_len);
  const double h = static_cast<double>(m.hidden);
  const double l = static_cast<double>(m.layers);
  const double heads = static_cast<double>(m.heads);
  const double head_dim = static_cast<double>(m.hidden / m.heads);
  const int64_t gqa = m.heads / m.kv_heads;
  const double projections = b * l * static_cast<double>(1 + 2 / gqa + 1) * h * h * s;
  const double attention = b * l * 2 * head_dim * heads * s * s;
  const double mlp = b * l * (m.activation == config::Activation::kSwiglu ? 3.0 : 2.0) *
                     static_cast<double>(m.ffn_hidden) * h * s;
  const double logits = b * static_cast<double>(m.vocab) * h * s;
  const double forward = projections + attention + mlp + logits;
  double macs = 3 * forward;
  if (scenario.parallelism.recompute == config::Recompute::kFull) macs += forward;
  if (scenario.parallelism.recompute == config::Recompute::kSelective) macs += attention;
  return 2 * macs;
}

LayerTimes layer_times(const engine::ScenarioRun& run) {
  size_t critical = 0;
  for (size_t i = 0; i < run.ranks.size(); ++i) {
    if (run.ranks[i] == run.result.critical_rank) critical = i;
  }
  const workload::Graph& graph = run.graph(critical);
  const engine::RankRun& timeline = run.result.ranks[critical];
  struct Span {
    double begin = std::numeric_limits<double>::infinity();
    double end = -std::numeric_limits<double>::infinity();
  };
  std::map<int32_t, Span> forward, backward;
  const auto& ops = graph.ops();
  for (size_t id = 0; id < ops.size(); ++id) {
    const workload::Op& op = ops[id];
    if (op.layer < 0 || op.micro_batch != 0) continue;
    if (op.kind == OpKind::kAlloc || op.kind == OpKind::kFree || op.kind == OpKind::kStreamWait) continue;
    if (op.stream == workload::Stream::kDpComm) continue;
    std::map<int32_t, Span>* spans = nullptr;
    if (op.phase == Phase::kForward) spans = &forward;
    if (op.phase == Phase::kBackward || op.phase == Phase::kRecompute) spans = &backward;
    if (spans == nullptr) continue;
    Span& span = (*spans)[op.layer];
    span.begin = std::min(span.begin, timeline.start_s[id]);
    span.end = std::max(span.end, timeline.end_s[id]);
  }
  std::vector<double> f, b;
  for (const auto& [layer, span] : forward) f.push_back(span.end - span.begin);
  for (const auto& [layer, span] : backward) b.push_back(span.end - span.begin);
  return {median(f), median(b), static_cast<int64_t>(f.size())};
}

int64_t max_sequence_tokens(const Case& c, const Variant& variant) {
  int64_t longest = 0;
  for (int64_t tokens = c.search->from_tokens; tokens <= c.search->to_tokens; tokens *= 2) {
    YAML::Node extra(YAML::NodeType::Map);
    extra["model"]["seq_len"] = tokens;
    config::Scenario s;
    try {
      s = load_variant(c.scenario, variant, extra);
      if (!fits(s)) break;
    } catch (const config::ConfigError&) {
      if (tokens == c.search->from_tokens) throw;
      break;
    } catch (const workload::PlanError&) {
      if (tokens == c.search->from_tokens) throw;
      break;
    }
    longest = tokens;
  }
  return longest;
}

bool timed(Metric metric) {
  return metric != Metric::kCommVolumeRatio && metric != Metric::kMaxSequenceTokens;
}

Role role_of(const Case& c, const config::Scenario& scenario) {
  if (c.role) return *c.role;
  const bool one_node = scenario.cluster.gpus <= scenario.cluster.topology.node.gpus;
  return timed(c.metric) && one_node ? Role::kCalibration : Role::kValidation;
}

Measurement measure(const Case& c, const Variant& variant) {
  const config::Scenario s = load_variant(c.scenario, variant);
  const Role role = role_of(c, s);
  const std::optional<config::StackProfile>& stack = s.cluster.hardware.stack;
  if (role == Role::kValidation && !variant.stack && stack && stack->fit) {
    for (const config::StackFitMeasurement& m : stack->fit->measurements) {
      if (m.id != c.id) continue;
      throw LeakageError(fmt::format(
          "validation case {} is among the measurements stack profile {} was fitted on (stack.fit in {}): a "
          "case a stack is fitted on is a calibration case and predicts nothing; refit the stack without it "
          "(trainsim calibrate fit-stack) or declare the case role: calibration",
          c.id, s.cluster.hardware.name, config::display_name(s.cluster.hardware_path)));
    }
  }
  Measurement out;
  switch (c.metric) {
    case Metric::kMaxSequenceTokens:
      out.simulated = max_sequence_tokens(c, variant);
      break;
    case Metric::kCommVolumeRatio: {
      const double volume = rank_volume_bytes(s);
      const double baseline = rank_volume_bytes(load_variant(*c.baseline, variant));
      out.simulated = volume / baseline;
      out.volume_bytes = volume;
      out.baseline_volume_bytes = baseline;
      break;
    }
    default:
      out = simulate(c, s);
  }
  out.role = role;
  out.gpus = s.cluster.gpus;
  out.profile = s.cluster.hardware.name;
  out.stack = stack.has_value();
  out.framework = regime_framework(s);
  out.gpu = s.cluster.hardware.gpu.name;
  return out;
}

}  // namespace trainsim::validate
