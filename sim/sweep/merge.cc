#include "sim/sweep/merge.h"

#include <map>

#include <fmt/format.h>

#include "sim/common/atomic_file.h"
#include "sim/sweep/results.h"

namespace trainsim::sweep {
namespace {

using nlohmann::json;

constexpr size_t kListed = 10;  // missing points named in a message

}  // namespace

MergeSummary merge_sweeps(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out) {
  if (dirs.empty()) throw SweepError("nothing to merge: give the shards' output directories");
  std::vector<SweepManifest> manifests;
  for (const std::filesystem::path& dir : dirs) manifests.push_back(read_manifest(dir));
  const SweepManifest& first = manifests.front();
  for (size_t i = 1; i < dirs.size(); ++i) {
    const SweepManifest& m = manifests[i];
    if (m.hash != first.hash) {
      throw SweepError(
          fmt::format("{} and {} hold different sweeps (hash {} vs {}); merge the shards of one sweep",
                      dirs.front().string(), dirs[i].string(), first.hash, m.hash));
    }
    if (m.evaluation() != first.evaluation()) {
      throw SweepError(fmt::format("{} holds {} results but {} holds {} results; rerun the odd one",
                                   dirs.front().string(), first.evaluation(), dirs[i].string(),
                                   m.evaluation()));
    }
  }
  std::map<size_t, std::pair<json, size_t>> by_index;  // point index -> (result, directory)
  for (size_t d = 0; d < dirs.size(); ++d) {
    for (json& r : read_results(dirs[d] / kResultsJsonl)) {
      const size_t index = r.at("point").at("index").get<size_t>();
      const std::string id = r.at("point").at("id").get<std::string>();
      if (index >= first.points) {
        throw SweepError(fmt::format("{}: point {} has index {}, but the sweep has {} points",
                                     dirs[d].string(), id, index, first.points));
      }
      const auto [it, inserted] = by_index.emplace(index, std::make_pair(std::move(r), d));
      if (!inserted) {
        throw SweepError(fmt::format("point {} (index {}) is in both {} and {}; merge each shard once", id,
                                     index, dirs[it->second.second].string(), dirs[d].string()));
      }
    }
  }
  if (by_index.size() != first.points) {
    std::vector<std::string> missing;
    for (size_t i = 0; i < first.points && missing.size() < kListed; ++i) {
      if (by_index.count(i) != 0) continue;
      missing.push_back(first.shard_count > 1
                            ? fmt::format("{} (shard {}/{})", i, i % first.shard_count, first.shard_count)
                            : std::to_string(i));
    }
    throw SweepError(
        fmt::format("{} of the sweep's {} points have no result, e.g. the points of index {}; run (or "
                    "resume with --resume) the shards that should have them",
                    first.points - by_index.size(), first.points, fmt::join(missing, ", ")));
  }
  std::filesystem::create_directories(out);
  if (!read_results(out / kResultsJsonl).empty()) {
    throw SweepError(fmt::format("{} already holds results; merge into a new directory", out.string()));
  }
  SweepManifest merged = first;
  merged.shard_index = 0;
  merged.shard_count = 1;
  std::string lines;
  for (const auto& [index, entry] : by_index) lines += entry.first.dump() + "\n";
  write_file_atomically(out / kResultsJsonl, lines);
  write_manifest(out, merged);
  write_results_csv(out, merged.axis_names);
  return {dirs.size(), by_index.size()};
}

}  // namespace trainsim::sweep
