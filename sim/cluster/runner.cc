#include "sim/cluster/runner.h"

#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "sim/common/isolated.h"
#include "sim/engine/engine.h"
#include "sim/report/link_report.h"
#include "sim/report/run_report.h"
#include "sim/report/trace.h"
#include "sim/workload/errors.h"

namespace trainsim::cluster {
namespace {

using nlohmann::json;

// Simulates the jobs `which` of `file` together (one job: alone, from time 0), writing the trace when
// `trace` is set and recording link load when options.run.busiest_links asks. Returns {jobs: [{report,
// iteration_end_s}] in the order of `which`, trace_events, links}, or {error: {kind, message}}.
json simulate(const ClusterFile& file, const std::vector<size_t>& which, const ClusterRunOptions& options,
              bool trace) {
  std::vector<engine::PlacedJob> placed;
  for (const size_t j : which) {
    placed.push_back(
        {&file.jobs[j].scenario, file.gpu_of_rank(j), which.size() > 1 ? file.jobs[j].start_s : 0});
  }
  const auto failure = [](const char* kind, const std::string& message) {
    return json{{"error", {{"kind", kind}, {"message", message}}}};
  };
  std::vector<std::unique_ptr<engine::ScenarioRun>> runs;
  try {
    runs = engine::run_jobs(placed, options.run);
  } catch (const workload::PlanError& e) {
    return failure("plan", e.what());
  } catch (const engine::BudgetExceededError& e) {
    return failure("budget", e.what());
  } catch (const engine::DeadlockError& e) {
    return failure("deadlock", e.what());
  }
  const report::ReportContext context{options.command_line, engine::to_string(options.run.network),
                                      options.run.engine.full, options.run.engine.iterations};
  json out = {{"jobs", json::array()}, {"trace_events", 0}, {"links", nullptr}};
  if (runs.front()->links) out["links"] = report::to_json(*runs.front()->links);
  std::vector<report::TracePart> parts;
  for (size_t i = 0; i < which.size(); ++i) {
    const ClusterJob& job = file.jobs[which[i]];
    runs[i]->links.reset();  // the cluster's, reported once above rather than in every job's report
    out["jobs"].push_back({{"report", to_json(report::make_run_report(job.scenario, *runs[i], context))},
                           {"iteration_end_s", runs[i]->result.iteration_end_s}});
    parts.push_back({&job.scenario, runs[i].get(), job.nodes, job.name});
  }
  if (trace) {
    std::ofstream stream(options.trace_path, std::ios::binary | std::ios::trunc);
    out["trace_events"] = report::write_chrome_trace(parts, file.name, stream);
    stream.close();
    if (!stream)
      throw std::runtime_error(fmt::format("cannot write the trace to {}", options.trace_path.string()));
  }
  return out;
}

JobRun job_run(const json& value) {
  return {value.at("report"), value.at("iteration_end_s").get<std::vector<double>>()};
}

ClusterRunError::Kind kind_of(const std::string& kind) {
  if (kind == "plan") return ClusterRunError::Kind::kPlan;
  if (kind == "budget") return ClusterRunError::Kind::kBudget;
  return ClusterRunError::Kind::kDeadlock;
}

}  // namespace

ClusterRuns run_cluster(const ClusterFile& file, const ClusterRunOptions& options) {
  const size_t jobs = file.jobs.size();
  // Task 0 runs every job together (the longest, so it starts first); task 1 + j runs job j alone.
  // A job by itself from time 0 is its own shared run.
  const bool alone_is_shared = jobs == 1 && file.jobs[0].start_s == 0;
  const size_t tasks = alone_is_shared ? 1 : jobs + 1;
  const auto members = [&](size_t task) {
    std::vector<size_t> which;
    for (size_t j = 0; j < jobs; ++j) {
      if (task == 0 || task == j + 1) which.push_back(j);
    }
    return which;
  };
  const auto describe = [&](size_t task) {
    if (task > 0) return fmt::format("job {} alone", file.jobs[task - 1].name);
    return jobs == 1 ? fmt::format("job {}", file.jobs[0].name) : std::string("all jobs together");
  };
  std::vector<std::optional<IsolatedResult>> results(tasks);
  run_isolated(
      tasks, {options.parallel, 0},
      [&](size_t task) {
        ClusterRunOptions task_options = options;
        if (task > 0) task_options.run.busiest_links = 0;
        return simulate(file, members(task), task_options, task == 0 && !options.trace_path.empty());
      },
      [&](size_t task, IsolatedResult r) { results[task] = std::move(r); });
  // The alone runs first: a job that cannot run alone is named by its own failure.
  for (size_t n = 1; n <= tasks; ++n) {
    const size_t task = n % tasks;
    const IsolatedResult& r = *results[task];
    if (!r.ok)
      throw ClusterRunError(ClusterRunError::Kind::kFailed, fmt::format("{}: {}", describe(task), r.error));
    if (r.value.is_object() && r.value.contains("error")) {
      const json& e = r.value.at("error");
      throw ClusterRunError(kind_of(e.at("kind").get<std::string>()),
                            fmt::format("{}: {}", describe(task), e.at("message").get<std::string>()));
    }
  }
  ClusterRuns out{std::vector<JobRuns>(jobs), results[0]->value.at("trace_events").get<size_t>(), {}};
  if (const json& links = results[0]->value.at("links"); !links.is_null()) {
    out.links = report::link_load_from_json(links);
  }
  for (size_t j = 0; j < jobs; ++j) {
    JobRuns& runs = out.jobs[j];
    runs.shared = job_run(results[0]->value.at("jobs").at(j));
    runs.alone = alone_is_shared ? runs.shared : job_run(results[j + 1]->value.at("jobs").at(0));
  }
  return out;
}

}  // namespace trainsim::cluster
