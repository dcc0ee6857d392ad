#include "sim/search/screening.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "sim/analytic/memory_bound.h"
#include "sim/common/isolated.h"
#include "sim/config/plan_rules.h"
#include "sim/estimate/iteration_time.h"
#include "sim/workload/plan.h"
#include "sim/workload/shapes.h"

namespace trainsim::search {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Candidates estimated per round of step 2b: as many as so far, within these (independent of --jobs, so
// the set of estimated plans, and the output, is the same whatever the parallelism).
constexpr size_t kMinEstimateRound = 64;
constexpr size_t kMaxEstimateRound = 1024;

// [begin, end) in at most `jobs` x kChunksPerJob chunks of near-equal size, for run_isolated.
struct Chunks {
  Chunks(size_t first, size_t last, int jobs)
      : begin(first), count(last - first), size(std::min(count, static_cast<size_t>(jobs) * kChunksPerJob)) {}
  // The bounds of chunk `chunk`.
  std::pair<size_t, size_t> operator[](size_t chunk) const {
    return {begin + chunk * count / size, begin + (chunk + 1) * count / size};
  }
  size_t begin;
  size_t count;
  size_t size;  // how many chunks
};

// Selective recompute re-runs the attention core whose scores it did not keep; a fused (flash)
// attention kernel never stores scores, so the plan is the same as recompute none (workload/activations).
bool selective_is_no_recompute(const config::Scenario& s) {
  return workload::derive_shapes(s, workload::make_plan(s)).fused_attention;
}

// Screens layouts [begin, end) in the calling process; returns what screen() merges. Each plan is
// checked with its own ZeRO stage and recompute mode (rules such as ZeRO-2/3 under a pipeline reject some
// variants of a layout and not others); the rejections of the chunk are counted per rule, with the first.
json screen_chunk(const CandidateBuilder& builder, const PlanSpace& space, size_t begin, size_t end) {
  const double capacity = builder.base().usable_hbm_bytes();
  std::map<std::string_view, json> invalid_by_rule;  // [first index, plans, rule, message]
  json candidates = json::array();
  int64_t over_memory = 0;
  int64_t duplicates = 0;
  for (size_t layout = begin; layout < end; ++layout) {
    for (size_t variant = 0; variant < space.variants(); ++variant) {
      const size_t index = layout * space.variants() + variant;
      const PlanChoice plan = space.at(index);
      const config::Scenario s = builder.scenario(plan, space.gpus);
      if (const std::optional<config::PlanViolation> broken = config::first_plan_violation(s)) {
        json& row = invalid_by_rule[broken->rule];
        if (row.is_null()) row = {index, 0, broken->rule, broken->text()};
        row[1] = row[1].get<int64_t>() + 1;
        continue;
      }
      if (plan.recompute == config::Recompute::kSelective && selective_is_no_recompute(s)) {
        ++duplicates;
        continue;
      }
      const double bound = analytic::memory_lower_bound(s).total();
      if (bound > capacity) {
        ++over_memory;
        continue;
      }
      candidates.push_back({index, bound, estimate::iteration_lower_bound_s(s)});
    }
  }
  json invalid = json::array();
  for (auto& [rule, row] : invalid_by_rule) invalid.push_back(std::move(row));
  return {{"invalid", invalid},
          {"over_memory", over_memory},
          {"duplicates", duplicates},
          {"candidates", candidates}};
}

// The closed-form estimates of candidates [begin, end) of `screening`: [closed form, fits] each.
json estimate_chunk(const CandidateBuilder& builder, const PlanSpace& space, const Screening& screening,
                    size_t begin, size_t end) {
  json out = json::array();
  for (size_t i = begin; i < end; ++i) {
    const config::Scenario s = builder.scenario(space.at(screening.candidates[i].index), space.gpus);
    WarningLog warnings;
    const estimate::IterationTimeEstimate e =
        estimate::estimate_iteration_time(s, &warnings, estimate::EstimateDetail::kTimeAndMemory);
    out.push_back({e.iteration_s, e.fits});
  }
  return out;
}

// Estimates candidates [screening.estimated, end) in `jobs` children and adds them to the survivors.
void estimate_range(const CandidateBuilder& builder, const PlanSpace& space, int jobs, size_t end,
                    Screening& screening) {
  if (end == screening.estimated) return;
  const Chunks bounds(screening.estimated, end, jobs);
  IsolatedOptions options;
  options.jobs = jobs;
  run_isolated(
      bounds.size, options,
      [&](size_t chunk) {
        const auto [first, last] = bounds[chunk];
        return estimate_chunk(builder, space, screening, first, last);
      },
      [&](size_t chunk, IsolatedResult result) {
        const auto [first, last] = bounds[chunk];
        if (!result.ok) {
          throw std::runtime_error(fmt::format("estimating {} plans (the first: {}) failed: {}", last - first,
                                               space.at(screening.candidates[first].index).describe(),
                                               result.error));
        }
        for (size_t i = first; i < last; ++i) {
          const Candidate& c = screening.candidates[i];
          const json& e = result.value[i - first];
          screening.survivors.push_back(
              {c.index, c.memory_bound_bytes, e[0].get<double>(), e[1].get<bool>()});
        }
      });
  screening.estimated = end;
  std::sort(screening.survivors.begin(), screening.survivors.end(), [](const Survivor& a, const Survivor& b) {
    return a.closed_form_s != b.closed_form_s ? a.closed_form_s < b.closed_form_s : a.index < b.index;
  });
}

// The end of the candidates, from screening.estimated on, whose lower bound is at most `limit_s`.
size_t end_below(const Screening& screening, double limit_s) {
  const auto it =
      std::upper_bound(screening.candidates.begin() + static_cast<std::ptrdiff_t>(screening.estimated),
                       screening.candidates.end(), limit_s,
                       [](double limit, const Candidate& c) { return limit < c.lower_bound_s; });
  return static_cast<size_t>(it - screening.candidates.begin());
}

// (1 + margin) x the closed form of the `top`-th survivor that fits; infinite while fewer fit.
double wait_line_s(const Screening& screening, int top, double margin) {
  int fitting = 0;
  for (const Survivor& s : screening.survivors) {
    if (s.fits && ++fitting == top) return (1 + margin) * s.closed_form_s;
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void Screening::add_invalid(const std::string& rule, int64_t plans, const std::string& message, size_t index,
                            const std::string& plan) {
  RuleCount& r = invalid[rule];
  r.rule = rule;
  r.plans += plans;
  const auto first = invalid_first_index.find(rule);
  if (first == invalid_first_index.end() || index < first->second) {
    invalid_first_index[rule] = index;
    r.example = message;
    r.example_plan = plan;
  }
}

Screening screen(const CandidateBuilder& builder, const PlanSpace& space, int jobs) {
  const size_t layouts = space.layouts.size();
  const Chunks bounds(0, layouts, jobs);
  Screening out;
  IsolatedOptions options;
  options.jobs = jobs;
  const Clock::time_point start = Clock::now();
  Clock::time_point last_progress = start;
  size_t screened = 0;
  run_isolated(
      bounds.size, options,
      [&](size_t chunk) {
        const auto [begin, end] = bounds[chunk];
        return screen_chunk(builder, space, begin, end);
      },
      [&](size_t chunk, IsolatedResult result) {
        if (!result.ok) {
          const auto [begin, end] = bounds[chunk];
          throw std::runtime_error(fmt::format("screening plans {}..{} failed: {}", begin * space.variants(),
                                               end * space.variants() - 1, result.error));
        }
        for (const json& row : result.value.at("invalid")) {
          const size_t index = row[0].get<size_t>();
          out.add_invalid(row[2].get<std::string>(), row[1].get<int64_t>(), row[3].get<std::string>(), index,
                          space.at(index).describe());
        }
        out.over_memory += result.value.at("over_memory").get<int64_t>();
        out.duplicates += result.value.at("duplicates").get<int64_t>();
        for (const json& row : result.value.at("candidates")) {
          out.candidates.push_back({row[0].get<size_t>(), row[1].get<double>(), row[2].get<double>()});
        }
        const auto [begin, end] = bounds[chunk];
        screened += (end - begin) * space.variants();
        if (seconds_since(last_progress) >= kProgressInterval_s) {
          const double elapsed_s = seconds_since(start);
          spdlog::info(
              "search: screened {} of {} plans ({:.0f}%), {} kept, {:.0f} s, about {:.0f} s left", screened,
              space.size(), 100.0 * static_cast<double>(screened) / static_cast<double>(space.size()),
              out.candidates.size(), elapsed_s,
              elapsed_s * static_cast<double>(space.size() - screened) / static_cast<double>(screened));
          last_progress = Clock::now();
        }
      });
  std::sort(out.candidates.begin(), out.candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.lower_bound_s != b.lower_bound_s ? a.lower_bound_s < b.lower_bound_s : a.index < b.index;
  });
  return out;
}

void estimate_in_order(const CandidateBuilder& builder, const PlanSpace& space, int jobs, int top,
                       double margin, Screening& screening) {
  const Clock::time_point start = Clock::now();
  Clock::time_point last_progress = start;
  for (;;) {
    const double line_s = wait_line_s(screening, top, margin);
    const size_t round = std::clamp(screening.estimated, kMinEstimateRound, kMaxEstimateRound);
    const size_t end = std::min(end_below(screening, line_s), screening.estimated + round);
    if (end == screening.estimated) break;
    estimate_range(builder, space, jobs, end, screening);
    if (seconds_since(last_progress) >= kProgressInterval_s) {
      spdlog::info(
          "search: estimated {} of {} candidates in lower-bound order (bound up to {:.4g} s), {:.0f} s",
          screening.estimated, screening.candidates.size(), screening.candidates[end - 1].lower_bound_s,
          seconds_since(start));
      last_progress = Clock::now();
    }
  }
  if (screening.waiting() == 0) {
    spdlog::info("search: estimated every candidate in {:.1f} s", seconds_since(start));
    return;
  }
  spdlog::info(
      "search: estimated {} of {} candidates in {:.1f} s; the others' lower bound is above (1 + margin) x "
      "the closed form of fitting plan #{}",
      screening.estimated, screening.candidates.size(), seconds_since(start), top);
}

void estimate_up_to(const CandidateBuilder& builder, const PlanSpace& space, int jobs, double limit_s,
                    Screening& screening) {
  estimate_range(builder, space, jobs, end_below(screening, limit_s), screening);
}

}  // namespace trainsim::search
