// trainsim analyze SCENARIO: numbers derived from the per-rank operation graphs next to the closed
// forms (Narayanan, Korthikanti, ZeRO, the seed papers), with the reason for every difference, plus
// the memory by category and the communication log of every rank class.
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/analytic/analysis.h"
#include "sim/config/types.h"
#include "sim/config/units.h"
#include "sim/estimate/layer_budget.h"
#include "sim/validate/case_scenario.h"
#include "sim/validate/comm_study.h"
#include "sim/workload/builder.h"
#include "sim/workload/errors.h"
#include "sim/workload/json.h"
#include "sim/workload/runtime_memory.h"
#include "sim/workload/summary.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct AnalyzeArgs {
  ScenarioArgs scenario;
  std::string format = "table";
  bool comm = false;
  std::optional<int32_t> layer;
};

// --layer N: one layer's ops with their prices.
void print_layer_budget(const AnalyzeArgs& args, Context& context) {
  const config::Scenario s = args.scenario.load();
  try {
    const estimate::LayerBudget budget = estimate::layer_budget(s, *args.layer);
    print_result(args.format, {[&] { return json_text(estimate::to_json(budget)); },
                               [&] { return estimate::render_layer_budget(budget); }});
    context.exit_code = kExitOk;
  } catch (const std::invalid_argument& e) {
    spdlog::error("{}: {}", args.scenario.file.string(), e.what());
    context.exit_code = kExitUsage;
  } catch (const workload::PlanError& e) {
    spdlog::error("{}: {}", args.scenario.file.string(), e.what());
    context.exit_code = kExitInfeasible;
  }
}

// --comm: the communication accounting of Anthony et al. 2024 for the scenario's model and GPUs.
void print_comm_study(const AnalyzeArgs& args) {
  YAML::Node user(YAML::NodeType::Map);
  for (const std::string& text : args.scenario.overrides) {
    validate::merge_override(user, config::parse_override(text));
  }
  const validate::CommStudy study = validate::study_comm([&](const YAML::Node& extra) {
    YAML::Node set = YAML::Clone(user);
    if (extra.IsMap()) validate::merge_into(set, extra);
    if (!is_validation_case(args.scenario.file)) return validate::load_scenario_with(args.scenario.file, set);
    return validate::load_case_scenario(
        validate::load_validation_set(args.scenario.file).cases.at(0).scenario, set);
  });
  print_result(args.format, {[&] { return json_text(validate::to_json(study)); },
                             [&] { return validate::render_table(study); }});
}

std::string plan_text(const config::Scenario& s) {
  const config::Parallelism& p = s.parallelism;
  const std::string experts =
      s.model.moe.enabled() ? fmt::format(" ep {} etp {}", p.ep, p.expert_tp_degree()) : std::string();
  return fmt::format("tp {} pp {} dp {} sp {} vpp {}{}, {}, sequence parallel {}, ZeRO-{}, recompute {}",
                     p.tp, p.pp, p.dp, p.sp, p.vpp, experts, config::to_string(p.schedule),
                     config::to_string(p.sequence_parallel), p.zero_stage, config::to_string(p.recompute));
}

double category(const workload::CategoryBytes& bytes, workload::MemoryCategory c) {
  return bytes[static_cast<int>(c)];
}

nlohmann::json report_json(const config::Scenario& s, const workload::WorkloadSummary& summary,
                           const analytic::Analysis& analysis,
                           const std::vector<analytic::Comparison>& rows) {
  using workload::MemoryCategory;
  nlohmann::json j;
  j["schema_version"] = 1;
  j["scenario"] = s.name;
  j["plan"] = plan_text(s);
  j["parameters"] = summary.parameters;
  j["model_flops_per_iteration"] = summary.iteration.model;
  j["hardware_flops_per_iteration"] = summary.iteration.hardware;
  j["executed_flops_per_iteration"] = summary.iteration.executed;
  nlohmann::json classes = nlohmann::json::array();
  nlohmann::json comm = nlohmann::json::array();
  for (const workload::ClassSummary& c : summary.classes) {
    const workload::CategoryBytes& at_peak = c.memory.hbm_at_peak;
    classes.push_back({{"class", c.cls.id},
                       {"stage", c.cls.stage},
                       {"ranks", c.cls.size},
                       {"weights", category(at_peak, MemoryCategory::kWeights)},
                       {"gradients", category(at_peak, MemoryCategory::kGradients)},
                       {"optimizer", category(at_peak, MemoryCategory::kOptimizer)},
                       {"activations", category(at_peak, MemoryCategory::kActivations)},
                       {"buffers", category(at_peak, MemoryCategory::kBuffers)},
                       {"runtime", category(at_peak, MemoryCategory::kRuntime)},
                       {"collective_communicators", c.communicators.collective_communicators},
                       {"p2p_peers_in_node", c.communicators.p2p_peers_in_node},
                       {"p2p_peers_across_nodes", c.communicators.p2p_peers_across_nodes},
                       {"peak_hbm_bytes", c.memory.peak_hbm_bytes},
                       {"peak_host_bytes", c.memory.peak_host_bytes}});
    nlohmann::json entries = workload::to_json(c)["comm"];
    comm.push_back(
        {{"class", c.cls.id}, {"stage", c.cls.stage}, {"ranks", c.cls.size}, {"entries", entries}});
  }
  j["memory"] = {
      {"classes", classes},
      {"per_node",
       {{"gpus_per_node", summary.gpus_per_node}, {"peak_host_bytes", summary.peak_host_bytes_per_node}}}};
  j["comm"] = comm;
  nlohmann::json graphs = nlohmann::json::array();
  for (const workload::ClassSummary& c : summary.classes) {
    graphs.push_back(
        {{"class", c.cls.id}, {"representative", c.cls.representative}, {"ops", c.ops}, {"edges", c.edges}});
  }
  j["graphs"] = graphs;
  j["closed_form"] = analytic::to_json(analysis);
  nlohmann::json comparison = nlohmann::json::array();
  for (const analytic::Comparison& row : rows) comparison.push_back(analytic::to_json(row));
  j["comparison"] = comparison;
  return j;
}

const char* plural(int64_t count) { return count == 1 ? "" : "s"; }

void print_table(std::ostream& out, const config::Scenario& s, const workload::WorkloadSummary& summary,
                 const analytic::Analysis& analysis, const std::vector<analytic::Comparison>& rows) {
  using workload::MemoryCategory;
  out << fmt::format("# trainsim analyze: {} ({} GPUs; {})\n", s.name, s.cluster.gpus, plan_text(s));
  size_t ops = 0;
  for (const workload::ClassSummary& c : summary.classes) ops += c.ops;
  out << fmt::format("# {} rank classes, {} ops in their graphs; ideal pipeline bubble {:.4f}\n\n",
                     summary.classes.size(), ops, analysis.bubble_fraction);
  out << fmt::format("{:<58} {:<20} {:>14} {:>14} {:>9}  {}\n", "# quantity", "scope", "graph", "closed form",
                     "diff", "why");
  for (const analytic::Comparison& r : rows) {
    out << fmt::format("{:<58} {:<20} {:>14.6g} {:>14.6g} {:>8.3f}%  {}\n", r.quantity, r.scope, r.graph,
                       r.closed_form, 100 * r.relative_difference, r.note);
  }
  out << fmt::format("\n{:<7} {:>5} {:>6} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}\n",
                     "# class", "stage", "ranks", "weights", "gradients", "optimizer", "activations",
                     "buffers", "runtime", "peak HBM", "peak host");
  for (const workload::ClassSummary& c : summary.classes) {
    const workload::CategoryBytes& m = c.memory.hbm_at_peak;
    out << fmt::format("{:<7} {:>5} {:>6} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}\n",
                       c.cls.id, c.cls.stage, c.cls.size,
                       config::format_bytes_rounded(category(m, MemoryCategory::kWeights)),
                       config::format_bytes_rounded(category(m, MemoryCategory::kGradients)),
                       config::format_bytes_rounded(category(m, MemoryCategory::kOptimizer)),
                       config::format_bytes_rounded(category(m, MemoryCategory::kActivations)),
                       config::format_bytes_rounded(category(m, MemoryCategory::kBuffers)),
                       config::format_bytes_rounded(category(m, MemoryCategory::kRuntime)),
                       config::format_bytes_rounded(c.memory.peak_hbm_bytes),
                       config::format_bytes_rounded(c.memory.peak_host_bytes));
  }
  out << fmt::format("# peak host memory per node ({} GPUs): {}\n", summary.gpus_per_node,
                     config::format_bytes_rounded(summary.peak_host_bytes_per_node));
  const std::optional<config::RuntimeMemory>& runtime = s.cluster.hardware.runtime_memory;
  for (const workload::ClassSummary& c : summary.classes) {
    const workload::CommunicatorUse& u = c.communicators;
    out << fmt::format(
        "# runtime of class {}: context + {} collective communicator{} + {} peer{} in the node + {} across "
        "nodes{}\n",
        c.cls.id, u.collective_communicators, plural(u.collective_communicators), u.p2p_peers_in_node,
        plural(u.p2p_peers_in_node), u.p2p_peers_across_nodes,
        runtime ? " = " + config::format_bytes_rounded(category(c.memory.hbm_max, MemoryCategory::kRuntime))
                : ": not counted (the hardware profile gives no runtime_memory)");
  }
  out << fmt::format("\n{:<7} {:<15} {:<10} {:>10} {:>14} {:>14} {:>14}\n", "# class", "kind", "group",
                     "calls", "bytes/call", "total bytes", "volume bytes");
  for (const workload::ClassSummary& c : summary.classes) {
    for (const workload::CommLogEntry& e : c.comm) {
      out << fmt::format("{:<7} {:<15} {:<10} {:>10} {:>14.0f} {:>14.6g} {:>14.6g}\n", c.cls.id,
                         workload::to_string(e.kind), workload::to_string(e.group), e.calls, e.bytes_per_call,
                         e.total_bytes, e.volume_bytes);
    }
  }
}

}  // namespace

void register_analyze(CLI::App& app, Context& context) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze", "Graph-derived FLOPs, parameters, memory and communication next to the closed-form models");
  args->scenario.add_to(cmd);
  add_format_option(cmd, args->format, false);
  cmd->add_flag("--comm", args->comm,
                "Communication accounting of Anthony et al. 2024 instead: DP, ZeRO-1/2/3, TP and PP on the "
                "scenario's model and GPUs (volume ratios, message sizes, sequence-length sweep)");
  cmd->add_option("--layer", args->layer,
                  "One transformer layer (global index from 0) instead: its forward, backward and recompute "
                  "ops on the first rank that holds it, each priced as the simulator prices it")
      ->excludes("--comm");
  cmd->footer(
      "Builds the operation graph of one rank per symmetry class and compares what they add up to with\n"
      "Narayanan/Korthikanti FLOPs, Korthikanti activation memory, ZeRO model states and the seed papers'\n"
      "communication volumes. Exits 4 when the parallel plan cannot be expressed.");
  cmd->callback([args, &context] {
    if (args->layer) {
      print_layer_budget(*args, context);
      return;
    }
    if (args->comm) {
      print_comm_study(*args);
      context.exit_code = kExitOk;
      return;
    }
    const config::Scenario s = args->scenario.load();
    try {
      const auto start = std::chrono::steady_clock::now();
      const workload::ParallelPlan plan = workload::make_plan(s);
      const std::vector<workload::Graph> graphs = workload::build_class_graphs(s, plan);
      const workload::WorkloadSummary summary = workload::summarize(s, plan, graphs);
      const analytic::Analysis analysis = analytic::analyze(s);
      const std::vector<analytic::Comparison> rows = analytic::compare(s, analysis, summary);
      spdlog::debug(
          "built and analysed {} class graphs in {:.1f} ms", graphs.size(),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      print_result(args->format, {[&] { return json_text(report_json(s, summary, analysis, rows)); },
                                  [&] {
                                    std::ostringstream table;
                                    print_table(table, s, summary, analysis, rows);
                                    return table.str();
                                  }});
      context.exit_code = kExitOk;
    } catch (const workload::PlanError& e) {
      spdlog::error("{}: {}", args->scenario.file.string(), e.what());
      context.exit_code = kExitInfeasible;
    }
  });
}

}  // namespace trainsim::cli
