#include "sim/search/report.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "sim/common/text_table.h"
#include "sim/config/units.h"
#include "sim/engine/provenance.h"
#include "sim/report/run_report.h"

namespace trainsim::search {
namespace {

using nlohmann::json;

std::string objective_name(Objective objective) {
  return objective == Objective::kTime ? "time" : "tokens_per_dollar";
}

std::string shell_word(const std::string& word) {
  return word.find_first_of(" '\"$*?") == std::string::npos ? word : "'" + word + "'";
}

json range_json(const RatioRange& range) {
  return {{"ratio_min", range.min}, {"ratio_max", range.max}, {"spread", range.spread}};
}

json plan_json(const SimulatedPlan& p, size_t rank, const SearchResult& r) {
  const json& run = p.run;
  json out = {{"rank", rank},
              {"plan", p.plan.to_json()},
              {"description", p.plan.describe()},
              {"overrides", p.overrides},
              {"closed_form_s", p.closed_form_s},
              {"memory_bound_bytes", p.memory_bound_bytes}};
  for (const char* key : {"iteration_time_s", "tokens_per_s", "tflops_per_gpu", "mfu", "hfu", "breakdown",
                          "memory", "warnings"}) {
    out[key] = run.at(key);
  }
  if (run.contains("campaign")) out["campaign"] = run.at("campaign");
  if (r.price_per_gpu_hour_usd) {
    const double price_per_s = *r.price_per_gpu_hour_usd / 3600.0 * static_cast<double>(r.gpus);
    const report::RunMetrics m = report::run_metrics(run);
    out["cost"] = {{"price_per_gpu_hour_usd", *r.price_per_gpu_hour_usd},
                   {"usd_per_iteration", m.iteration_time_s * price_per_s},
                   {"tokens_per_usd", m.tokens_per_s / price_per_s}};
  }
  out["scenario_yaml"] = p.scenario_yaml;
  return out;
}

}  // namespace

json to_json(const SearchResult& r) {
  json invalid = json::array();
  for (const RuleCount& c : r.invalid) {
    invalid.push_back(
        {{"rule", c.rule}, {"plans", c.plans}, {"example", c.example}, {"example_plan", c.example_plan}});
  }
  json failures = json::array();
  for (const SimulationFailure& f : r.failures) {
    failures.push_back({{"plan", f.plan.describe()}, {"error", f.error}});
  }
  json best = json::array();
  for (size_t i = 0; i < r.best.size(); ++i) best.push_back(plan_json(r.best[i], i + 1, r));
  return {
      {"schema_version", 1},
      {"provenance", engine::provenance(r.command_line)},
      {"search",
       {{"scenario", r.scenario},
        {"gpus", r.gpus},
        {"objective", objective_name(r.objective)},
        {"top", r.top},
        {"margin", r.margin},
        {"refine_margin", r.refine_margin},
        {"network", r.network},
        {"pins", r.pins},
        {"price_per_gpu_hour_usd",
         r.price_per_gpu_hour_usd ? json(*r.price_per_gpu_hour_usd) : json(nullptr)}}},
      {"counts",
       {{"enumerated", r.enumerated},
        {"invalid", r.invalid_plans()},
        {"duplicates", r.duplicates},
        {"over_memory_bound", r.over_memory_bound},
        {"kernel_time_bound", r.kernel_time_bound},
        {"slower_bound", r.slower_bound},
        {"simulated", r.simulated},
        {"refined", r.refined},
        {"reported", r.reported},
        {"simulated_over_memory", r.simulated_over_memory},
        {"simulation_failed", r.failures.size()},
        {"ranked", r.ranked}}},
      {"invalid_by_rule", invalid},
      {"failures", failures},
      {"closed_form", range_json(r.closed_form)},
      {"refine", range_json(r.refine)},
      {"extrapolation", range_json(r.extrapolation)},
      {"timing",
       {{"screening_s", r.screening_wall_s}, {"simulation_s", r.simulation_wall_s}, {"wall_s", r.wall_s}}},
      {"best", best},
  };
}

std::string render_table(const SearchResult& r, const std::string& scenario_path,
                         const std::vector<std::string>& user_overrides) {
  std::string out = fmt::format("# trainsim search: {} on {} GPUs, objective {}, network {}\n", r.scenario,
                                r.gpus, objective_name(r.objective), r.network);
  if (!r.pins.empty()) out += fmt::format("# held to: {}\n", r.pins);
  out += fmt::format("{:<34} {:>10}\n", "plans enumerated", r.enumerated);
  out += fmt::format("{:<34} {:>10}\n", "  invalid (rules below)", r.invalid_plans());
  out += fmt::format("{:<34} {:>10}   (selective recompute with fused attention = none)\n",
                     "  the same as another plan", r.duplicates);
  out += fmt::format("{:<34} {:>10}\n", "  over the memory lower bound", r.over_memory_bound);
  out +=
      fmt::format("{:<34} {:>10}   (kernel time alone over {:.2f} x the closed form of fitting plan #{})\n",
                  "  slower by the kernel-time bound", r.kernel_time_bound, 1 + r.margin, r.top);
  out += fmt::format("{:<34} {:>10}   (closed form over {:.2f} x that of fitting plan #{})\n",
                     "  slower by the closed-form bound", r.slower_bound, 1 + r.margin, r.top);
  out += fmt::format("{:<34} {:>10}   (ideal network; {} over memory, {} failed)\n", "  simulated",
                     r.simulated, r.simulated_over_memory, r.failures.size());
  if (r.refined > 0) {
    out += fmt::format("{:<34} {:>10}   (ideal time within {:.2f} x that of plan #{})\n",
                       "  refined on SimGrid", r.refined, 1 + r.refine_margin, r.top);
  }
  out += fmt::format("{:<34} {:>10}\n", "ranked (simulated and fitting)", r.ranked);
  out += fmt::format("{:<34} {:>10.1f} s (screening {:.1f} s, simulation {:.1f} s)\n", "wall time", r.wall_s,
                     r.screening_wall_s, r.simulation_wall_s);
  out += fmt::format(
      "{:<34} {:>10.3f}   (ideal-network / closed-form time from {:.3f} to {:.3f}, plans that fit)\n",
      "closed-form spread", r.closed_form.spread, r.closed_form.min, r.closed_form.max);
  if (r.refined > 0) {
    out += fmt::format("{:<34} {:>10.3f}   (SimGrid / ideal-network time from {:.3f} to {:.3f})\n",
                       "refinement spread", r.refine.spread, r.refine.min, r.refine.max);
  }
  if (r.reported > 0) {
    out += fmt::format("{:<34} {:>10.6f}   (full / extrapolated time from {:.6f} to {:.6f}, {} best plans)\n",
                       "extrapolation check", r.extrapolation.spread, r.extrapolation.min,
                       r.extrapolation.max, r.reported);
  }

  if (!r.invalid.empty()) {
    out += "\n# invalid plans by rule\n";
    for (const RuleCount& c : r.invalid) {
      out += fmt::format("{:>10}  {}\n{:>10}  e.g. {}: {}\n", c.plans, c.rule, "", c.example_plan, c.example);
    }
  }
  for (const SimulationFailure& f : r.failures)
    out += fmt::format("\nsimulation failed: {}: {}\n", f.plan.describe(), f.error);

  out += fmt::format("\n# best {} of {} ranked plans (breakdown in % of the iteration)\n", r.best.size(),
                     r.ranked);
  using Align = TextTable::Align;
  TextTable table(
      {{"rank", Align::kRight, 4},      {"tp", Align::kRight, 4},    {"pp", Align::kRight, 4},
       {"dp", Align::kRight, 5},        {"sp", Align::kRight, 4},    {"vpp", Align::kRight, 4},
       {"ep", Align::kRight, 4},        {"etp", Align::kRight, 4},   {"schedule", Align::kLeft, 11},
       {"sp kind", Align::kLeft, 8},    {"chunk", Align::kRight, 6}, {"zero", Align::kRight, 4},
       {"recompute", Align::kLeft, 9},  {"mb", Align::kRight, 4},    {"iteration s", Align::kRight, 11},
       {"tokens/s", Align::kRight, 12}, {"MFU", Align::kRight, 6},   {"HBM GiB", Align::kRight, 8},
       {"compute", Align::kRight, 7},   {"comm", Align::kRight, 6},  {"bubble", Align::kRight, 6},
       {"offload", Align::kRight, 7},   {"idle", Align::kRight, 5}});
  if (r.price_per_gpu_hour_usd) {
    table.add_column({"USD/iter", Align::kRight, 10});
    table.add_column({"tokens/USD", Align::kRight, 10});
  }
  const std::optional<report::RunMetrics> best =
      r.best.empty() ? std::nullopt : std::optional(report::run_metrics(r.best.front().run));
  const bool power = best && best->gpu_mean_w;
  if (power) {
    table.add_column({"GPU W", Align::kRight, 8});
    table.add_column({"J/token", Align::kRight, 7});
  }
  const bool campaign = best && best->campaign_wall_time_s;
  if (campaign) table.add_column({"train days", Align::kRight, 10});
  for (size_t i = 0; i < r.best.size(); ++i) {
    const SimulatedPlan& p = r.best[i];
    const PlanChoice& c = p.plan;
    const report::RunMetrics m = report::run_metrics(p.run);
    const double t = m.iteration_time_s;
    std::vector<std::string> row = {
        std::to_string(i + 1),
        std::to_string(c.tp),
        std::to_string(c.pp),
        std::to_string(c.dp),
        std::to_string(c.sp),
        std::to_string(c.vpp),
        r.moe ? std::to_string(c.ep) : "-",
        r.moe ? std::to_string(c.expert_tp > 0 ? c.expert_tp : c.tp) : "-",
        std::string(config::to_string(c.schedule)),
        std::string(config::to_string(c.sequence_parallel)) +
            (c.sequence_parallel == config::SequenceParallel::kRing && c.cp_comm == config::CpComm::kAllGather
                 ? "/ag"
                 : ""),
        c.fpdt_chunk_tokens > 0 ? config::format_count(c.fpdt_chunk_tokens) : "-",
        std::to_string(c.zero_stage),
        std::string(config::to_string(c.recompute)),
        std::to_string(c.micro_batch),
        fmt::format("{:.5g}", t),
        fmt::format("{:.1f}", m.tokens_per_s),
        fmt::format("{:.1f}%", 100 * m.mfu),
        fmt::format("{:.2f}", m.memory.peak_hbm_bytes / config::kBytesPerGiB)};
    for (const report::BreakdownPart& part : report::kBreakdownParts) {
      row.push_back(fmt::format("{:.1f}", t > 0 ? 100 * m.breakdown.*part.seconds / t : 0.0));
    }
    if (r.price_per_gpu_hour_usd) {
      const double price_per_s = *r.price_per_gpu_hour_usd / 3600.0 * static_cast<double>(r.gpus);
      row.push_back(fmt::format("{:.4g}", t * price_per_s));
      row.push_back(fmt::format("{:.0f}", m.tokens_per_s / price_per_s));
    }
    if (power) {
      row.push_back(fmt::format("{:.0f}", m.gpu_mean_w.value()));
      row.push_back(fmt::format("{:.3g}", m.energy_per_token_j.value()));
    }
    if (campaign) {
      const double wall_s = m.campaign_wall_time_s.value();
      row.push_back(std::isfinite(wall_s) ? fmt::format("{:.1f}", wall_s / 86400) : "never");
    }
    table.add_row(std::move(row));
  }
  out += table.render();
  if (!r.best.empty()) {
    out += "\n# the best plan: trainsim run " + shell_word(scenario_path);
    for (const std::string& o : user_overrides) out += " --set " + shell_word(o);
    for (const std::string& o : r.best.front().overrides) out += " --set " + shell_word(o);
    out += "\n# (or save best[0].scenario_yaml of --format json next to the scenario)\n";
  }
  return out;
}

}  // namespace trainsim::search
