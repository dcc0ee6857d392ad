#include "sim/sweep/runner.h"

#include <set>
#include <signal.h>

#include <fmt/format.h>

#include "sim/common/isolated.h"

namespace trainsim::sweep {
namespace {

using nlohmann::json;

constexpr size_t kAnalyticPointsPerChild = 16;

SweepManifest manifest_of(const SweepFile& sweep, const ExpandedSweep& expanded, const SweepOptions& o) {
  SweepManifest m;
  m.name = sweep.name;
  m.sweep_file = o.sweep_file;
  m.hash = expanded.hash;
  m.axis_names = expanded.axis_names;
  m.points = expanded.points.size();
  m.mode = mode_name(o.evaluate.mode);
  m.network = o.evaluate.mode == Mode::kAnalytic ? "analytic" : engine::to_string(o.evaluate.network);
  m.full = o.evaluate.mode == Mode::kSimulate && o.evaluate.full;
  m.all_traffic = o.evaluate.mode == Mode::kSimulate && o.evaluate.all_traffic;
  m.shard_index = o.shard_index;
  m.shard_count = o.shard_count;
  return m;
}

// Checks that `dir` may receive this run's results and returns the ids already finished there.
std::set<std::string> prepare_directory(const std::filesystem::path& dir, const SweepManifest& wanted,
                                        const std::vector<size_t>& shard, const ExpandedSweep& expanded,
                                        bool resume) {
  std::filesystem::create_directories(dir);
  const std::vector<json> existing = read_results(dir / kResultsJsonl);
  const bool has_manifest = std::filesystem::exists(dir / kSweepJson);
  if (has_manifest) {
    const SweepManifest found = read_manifest(dir);
    const auto shard_text = [](const SweepManifest& m) {
      return fmt::format("{}/{}", m.shard_index, m.shard_count);
    };
    std::string differs;
    if (found.hash != wanted.hash) {
      differs =
          fmt::format("the results of another sweep (hash {}, this one is {})", found.hash, wanted.hash);
    } else if (found.evaluation() != wanted.evaluation()) {
      differs = fmt::format("{} results, this run is {}", found.evaluation(), wanted.evaluation());
    } else if (shard_text(found) != shard_text(wanted)) {
      differs =
          fmt::format("the results of shard {}, this run is shard {}", shard_text(found), shard_text(wanted));
    }
    if (!differs.empty() && (resume || !existing.empty())) {
      throw SweepError(fmt::format("{} holds {}; choose another --out directory (or remove this one)",
                                   dir.string(), differs));
    }
  } else if (!existing.empty()) {
    throw SweepError(fmt::format("{} holds a {} but no {}; choose another --out directory", dir.string(),
                                 kResultsJsonl, kSweepJson));
  }
  if (!existing.empty() && !resume) {
    throw SweepError(
        fmt::format("{} already holds {} results of this sweep; pass --resume to continue it, or "
                    "choose another --out directory",
                    dir.string(), existing.size()));
  }
  std::set<std::string> ours;
  for (const size_t i : shard) ours.insert(expanded.points[i].id);
  std::set<std::string> done;
  for (const json& r : existing) {
    const std::string id = r.at("point").at("id").get<std::string>();
    if (ours.count(id) == 0) {
      throw SweepError(fmt::format("{}/{} has a result for point {}, which this shard does not have",
                                   dir.string(), kResultsJsonl, id));
    }
    done.insert(id);
  }
  write_manifest(dir, wanted);
  return done;
}

}  // namespace

std::vector<size_t> shard_points(size_t points, size_t index, size_t count) {
  std::vector<size_t> out;
  for (size_t i = index; i < points; i += count) out.push_back(i);
  return out;
}

SweepSummary run_sweep(const SweepFile& sweep, const ExpandedSweep& expanded, const SweepOptions& options,
                       const std::function<std::unique_ptr<Progress>(size_t total)>& make_progress,
                       const std::function<bool()>& stop) {
  if (options.shard_count < 1 || options.shard_index >= options.shard_count) {
    throw SweepError(fmt::format("shard {}/{} does not exist: give --shard I/N with 0 <= I < N",
                                 options.shard_index, options.shard_count));
  }
  const std::vector<size_t> shard =
      shard_points(expanded.points.size(), options.shard_index, options.shard_count);
  const std::set<std::string> done =
      prepare_directory(options.out, manifest_of(sweep, expanded, options), shard, expanded, options.resume);
  std::vector<const Point*> pending;
  for (const size_t i : shard) {
    if (done.count(expanded.points[i].id) == 0) pending.push_back(&expanded.points[i]);
  }
  SweepSummary summary;
  summary.shard_points = shard.size();
  summary.skipped = shard.size() - pending.size();

  ResultsLog log(options.out / kResultsJsonl);
  std::unique_ptr<Progress> progress = make_progress ? make_progress(pending.size()) : nullptr;
  // Completions wait here until every point before them is written.
  std::map<size_t, json> early;
  size_t next = 0;
  const auto stopped = [&] {
    summary.interrupted = summary.interrupted || (stop && stop());
    return summary.interrupted;
  };
  const auto record = [&](size_t i, json result) {
    if (progress) progress->update(result);
    early.emplace(i, std::move(result));
    for (auto it = early.begin(); it != early.end() && it->first == next; it = early.erase(it), ++next) {
      log.append(it->second);
      ++summary.evaluated;
    }
  };
  // Evaluates pending[first[k] .. first[k] + count[k]) in child k, point by point. A child whose
  // points all come back records them; one that crashed or overran records them as failed when it
  // held one point, and hands them back for one child each otherwise.
  const auto evaluate = [&](const std::vector<size_t>& first, const std::vector<size_t>& count,
                            double time_limit_s, std::vector<size_t>* retry) {
    run_isolated(
        first.size(), {std::max(1, options.jobs), time_limit_s},
        [&](size_t k) {
          // The child ends on a signal like any program; the parent decides what to keep.
          ::signal(SIGINT, SIG_DFL);
          ::signal(SIGTERM, SIG_DFL);
          json results = json::array();
          for (size_t i = first[k]; i < first[k] + count[k]; ++i) {
            results.push_back(evaluate_point(sweep, *pending[i], options.evaluate));
          }
          return results;
        },
        [&](size_t k, IsolatedResult r) {
          if (stopped()) return;  // a child killed by the same signal is not a result
          for (size_t j = 0; j < count[k]; ++j) {
            const size_t i = first[k] + j;
            if (r.ok) {
              record(i, std::move(r.value[j]));
            } else if (count[k] == 1) {
              record(i, failed_result(*pending[i], options.evaluate, r.error));
            } else {
              retry->push_back(i);
            }
          }
        },
        stopped);
  };
  // Closed-form points take milliseconds, less than a process costs to start and end, so a child
  // evaluates several; a time limit per point needs a child per point.
  const size_t per_child = options.evaluate.mode == Mode::kAnalytic && options.time_limit_per_point_s == 0
                               ? kAnalyticPointsPerChild
                               : 1;
  std::vector<size_t> first, count, retry;
  for (size_t i = 0; i < pending.size(); i += per_child) {
    first.push_back(i);
    count.push_back(std::min(per_child, pending.size() - i));
  }
  evaluate(first, count, options.time_limit_per_point_s, &retry);
  if (!retry.empty() && !stopped()) evaluate(retry, std::vector<size_t>(retry.size(), 1), 0, nullptr);
  // Finished points still waiting for an earlier one (only after a stop) are kept too.
  for (const auto& [i, result] : early) {
    log.append(result);
    ++summary.evaluated;
  }
  if (progress) progress->finish();
  write_results_csv(options.out, expanded.axis_names);
  return summary;
}

}  // namespace trainsim::sweep
