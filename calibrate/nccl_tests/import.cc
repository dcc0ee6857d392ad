#include "calibrate/nccl_tests/import.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "calibrate/fit/collective_fits.h"
#include "calibrate/profile/builder.h"

namespace trainsim::calibrate {
namespace {

// kind, ranks, nodes, algorithm
using Group =
    std::tuple<config::CollectiveKind, int64_t, int64_t, std::optional<config::CollectiveAlgorithm>>;

// The logs with the algorithm each was timed with, as `choice` (ImportOptions::algorithm) says.
std::vector<NcclTestsLog> with_algorithms(std::vector<NcclTestsLog> logs, const std::string& choice) {
  for (NcclTestsLog& log : logs) {
    if (choice == "auto") {
      log.algorithm.reset();
    } else if (!choice.empty()) {
      log.algorithm = pinned_algorithm(choice);
      if (!log.algorithm) {
        throw std::invalid_argument(
            fmt::format("--algorithm {}: expected auto (NCCL's own choice), ring, tree or nvls", choice));
      }
    } else if (!log.nccl_algo.empty() && !log.algorithm) {
      throw std::invalid_argument(fmt::format(
          "{}: ran with NCCL_ALGO={}, which pins no one algorithm trainsim models (ring, tree, nvls); import "
          "it with --algorithm auto to calibrate it as NCCL's choice, or name the algorithm NCCL ran",
          log.file, log.nccl_algo));
    }
  }
  return logs;
}

// Sets the sources of a table: one key for the whole table when every row has the same source, one
// key per row otherwise. Removes the table's previous keys first.
void set_table_sources(std::map<std::string, std::string>& sources, const std::string& table,
                       const std::vector<std::string>& row_sources) {
  for (auto it = sources.begin(); it != sources.end();) {
    const bool ours =
        it->first == table || it->first.rfind(table + "[", 0) == 0 || it->first.rfind(table + ".", 0) == 0;
    it = ours ? sources.erase(it) : std::next(it);
  }
  if (row_sources.empty()) return;
  if (std::set<std::string>(row_sources.begin(), row_sources.end()).size() == 1) {
    sources[table] = row_sources.front();
    return;
  }
  for (size_t i = 0; i < row_sources.size(); ++i) sources[fmt::format("{}[{}]", table, i)] = row_sources[i];
}

}  // namespace

ProfileDocument import_nccl_tests(const config::HardwareProfile& base,
                                  const std::vector<NcclTestsLog>& given_logs, const ImportOptions& options) {
  const std::vector<NcclTestsLog> logs = with_algorithms(given_logs, options.algorithm);
  ProfileDocument doc;
  config::HardwareProfile& p = doc.profile;
  p = base;
  p.path.clear();
  p.content_hash.clear();
  p.name = options.name.empty() ? base.name + "-nccl" : options.name;

  std::map<Group, const NcclTestsLog*> imported;
  for (const NcclTestsLog& log : logs) {
    const Group g{log.kind, log.rank_count, log.node_count, log.algorithm};
    const auto [it, fresh] = imported.emplace(g, &log);
    if (!fresh) {
      throw std::invalid_argument(fmt::format(
          "{} and {} both hold {} over {} ranks on {} nodes ({}); import one of them", it->second->file,
          log.file, log.program, log.rank_count, log.node_count,
          log.algorithm ? fmt::format("NCCL_ALGO={}", config::to_string(*log.algorithm)) : "NCCL's choice"));
    }
  }
  const auto citation = [](const NcclTestsLog& log) {
    return fmt::format("imported: {} ({}, {})", std::filesystem::path(log.file).filename().string(),
                       describe(log), log.content_hash);
  };

  // Samples: the base's rows of other groups, then each log's rows.
  std::vector<config::CollectiveSample> samples;
  std::vector<std::string> sample_sources;
  for (size_t i = 0; i < base.collective_samples.size(); ++i) {
    const config::CollectiveSample& s = base.collective_samples[i];
    if (imported.count({s.kind, s.ranks, s.nodes, s.algorithm}) != 0) continue;
    samples.push_back(s);
    sample_sources.push_back(base.source_of(fmt::format("collective_samples[{}]", i)));
    doc.collective_sample_comments.push_back("");
  }
  for (const NcclTestsLog& log : logs) {
    for (const NcclTestsRow& row : log.rows) {
      const std::optional<config::CollectiveSample> sample = sample_of(log, row);
      if (!sample) continue;
      samples.push_back(*sample);
      sample_sources.push_back(citation(log));
      const NcclTestsTiming& t = row.out_of_place.present ? row.out_of_place : row.in_place;
      doc.collective_sample_comments.push_back(fmt::format(
          "{}{}: algbw {} GB/s, busbw {} GB/s{}", std::filesystem::path(log.file).filename().string(),
          row.line > 0 ? fmt::format(" line {}", row.line) : fmt::format(" results[{}]", row.index),
          t.algbw_gbps, t.busbw_gbps, row.out_of_place.present ? "" : " (in-place)"));
    }
  }
  p.collective_samples = samples;
  set_table_sources(p.sources, "collective_samples", sample_sources);

  // Fits: the base's fits of other groups, then fits of the imported rows.
  std::vector<config::CollectiveFit> fits;
  std::vector<std::string> fit_sources;
  for (size_t i = 0; i < base.collective_fits.size(); ++i) {
    const config::CollectiveFit& f = base.collective_fits[i];
    if (imported.count({f.kind, f.ranks, f.nodes, f.algorithm}) != 0) continue;
    fits.push_back(f);
    fit_sources.push_back(base.source_of(fmt::format("collective_fits[{}]", i)));
    doc.collective_fit_comments.push_back("");
  }
  std::vector<std::string> notes;
  for (const NcclTestsLog& log : logs) {
    std::vector<std::string> fit_notes;
    for (const FittedCollective& f : fit_collectives(samples_of(log), &fit_notes)) {
      config::CollectiveFit fit = f.fit;
      fit.min_bytes = std::round(fit.min_bytes);
      fit.max_bytes = std::round(fit.max_bytes);
      fit.latency_s = round_significant(fit.latency_s);
      fit.bus_bandwidth_bytes_per_s = round_significant(fit.bus_bandwidth_bytes_per_s);
      fits.push_back(fit);
      fit_sources.push_back("fitted to the rows " + citation(log) +
                            ": piecewise alpha-beta, least squares of relative errors");
      doc.collective_fit_comments.push_back(fmt::format("{} sizes, max error {:.1f}%, rms {:.1f}%",
                                                        f.quality.points, 100 * f.quality.max_relative_error,
                                                        100 * f.quality.rms_relative_error));
    }
    for (const std::string& n : fit_notes) notes.push_back(fmt::format("{}: {}", log.file, n));
  }
  p.collective_fits = fits;
  set_table_sources(p.sources, "collective_fits", fit_sources);

  p.provenance.kind = config::ProvenanceKind::kImported;
  p.provenance.date = options.date;
  p.provenance.tool_version = options.tool_version;
  p.provenance.command = options.command;
  std::string text = fmt::format(
      "Collective tables imported from nccl-tests logs into {} ({}); every other value is "
      "the base's, with its sources.",
      options.base_label, base.content_hash);
  for (const NcclTestsLog& log : logs) {
    text += fmt::format("\n{}: {}; {}", log.file, describe(log), log.parameters);
  }
  for (const std::string& n : notes) text += "\n" + n;
  if (!base.provenance.notes.empty()) text += "\nBase profile notes: " + base.provenance.notes;
  p.provenance.notes = text;
  doc.header.push_back(fmt::format("{}: {} with collectives imported from nccl-tests", p.name, base.name));
  doc.header.push_back(fmt::format("{}, {}", options.tool_version, options.date));
  doc.header.push_back("command: " + options.command);
  return doc;
}

}  // namespace trainsim::calibrate
