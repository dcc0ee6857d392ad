#include "calibrate/nccl_tests/log.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate/collective_kinds.h"
#include "calibrate/nccl_tests/parsers.h"
#include "sim/common/hash.h"
#include "sim/config/diagnostics.h"

namespace trainsim::calibrate {
namespace {

config::Location where(const NcclTestsLog& log, const NcclTestsRow& row) {
  return row.line > 0 ? config::Location{log.file, row.line, 1} : config::Location{log.file, 0, 0};
}

std::string path_of(const NcclTestsRow& row) {
  return row.line > 0 ? "" : fmt::format("results[{}]", row.index);
}

// The program a name mentions ("logs/all_reduce_perf.16gpu.txt", "all_reduce_perf_mpi").
std::optional<config::CollectiveKind> kind_mentioned(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  for (const char* stem : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"}) {
    if (name.find(stem) != std::string::npos) return kind_of_program(stem);
  }
  return std::nullopt;
}

}  // namespace

void finish_log(NcclTestsLog& log) {
  const config::Location top{log.file, 1, 1};
  std::optional<config::CollectiveKind> kind = kind_of_program(log.program);
  if (!kind && !log.program.empty()) kind = kind_mentioned(log.program);
  if (!kind) kind = kind_mentioned(log.file);
  if (!kind) {
    config::throw_config_error(
        top, "",
        log.program.empty()
            ? "the log does not say which nccl-tests program wrote it (older versions do not); name the file "
              "after it, e.g. all_reduce_perf.log"
            : fmt::format("nccl-tests program \"{}\" is not one trainsim imports (all_reduce_perf, "
                          "all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf)",
                          log.program));
  }
  log.kind = *kind;
  log.program = std::string(nccl_tests_program(log.kind));
  if (log.ranks.empty()) {
    config::throw_config_error(top, "",
                               "no \"#  Rank\" lines (or JSON devices): cannot tell how many ranks and "
                               "nodes ran; import the complete log");
  }
  std::set<std::string> hosts;
  int highest = 0;
  for (const NcclTestsRank& r : log.ranks) {
    hosts.insert(r.host);
    highest = std::max(highest, r.rank + 1);
  }
  log.rank_count = std::max({log.rank_count, highest, static_cast<int>(log.ranks.size())});
  log.node_count = static_cast<int>(hosts.size());
  if (log.rows.empty()) config::throw_config_error(top, "", "the log has no result rows");

  const double factor = bus_bandwidth_factor(log.kind, log.rank_count);
  const NcclTestsRow& first = log.rows.front();
  double previous_size = 0;
  for (size_t i = 0; i < log.rows.size(); ++i) {
    const NcclTestsRow& row = log.rows[i];
    if (row.type != first.type || row.redop != first.redop) {
      config::throw_config_error(
          where(log, row), path_of(row),
          fmt::format("datatype/operation {}/{} after {}/{}: the log holds several (-d all or -o all); run "
                      "nccl-tests with one -d and one -o per log",
                      row.type, row.redop, first.type, first.redop));
    }
    // Sizes increase; rows of size 0 (fewer elements than ranks) may repeat at the start.
    if (row.size_bytes > 0 && row.size_bytes <= previous_size) {
      config::throw_config_error(
          where(log, row), path_of(row),
          fmt::format("size {:.0f} does not follow {:.0f}: the log holds several cycles (-N) "
                      "or runs; import one sweep per file",
                      row.size_bytes, previous_size));
    }
    if (row.size_bytes > 0) previous_size = row.size_bytes;
    for (const NcclTestsTiming* t : {&row.out_of_place, &row.in_place}) {
      if (!t->present) continue;
      if (t->wrong && *t->wrong > 0) {
        config::throw_config_error(
            where(log, row), path_of(row),
            fmt::format("nccl-tests found {:.0f} wrong elements at size {:.0f}: the run is broken, its times "
                        "mean nothing",
                        *t->wrong, row.size_bytes));
      }
      const double expected = t->algbw_gbps * factor;
      if (t->algbw_gbps >= 0.1 && std::abs(t->busbw_gbps - expected) > 0.011 + 0.01 * expected) {
        config::throw_config_error(
            where(log, row), path_of(row),
            fmt::format(
                "busbw {} is {:.4g} x algbw {}, but {} over {} ranks has factor {:.4g} (nccl-tests "
                "doc/PERFORMANCE.md): is the log from another program, or are \"#  Rank\" lines missing?",
                t->busbw_gbps, t->busbw_gbps / t->algbw_gbps, t->algbw_gbps, log.program, log.rank_count,
                factor));
      }
    }
    if (!row.out_of_place.present && !row.in_place.present) {
      config::throw_config_error(where(log, row), path_of(row), "the row has no time");
    }
  }
}

NcclTestsLog read_nccl_tests(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream bytes;
  if (in) bytes << in.rdbuf();
  if (!in) {
    config::throw_config_error({file.string()}, "",
                               fmt::format("cannot read nccl-tests log ({})",
                                           std::filesystem::exists(file) ? "not readable" : "no such file"));
  }
  const std::string text = bytes.str();
  const size_t first = text.find_first_not_of(" \t\r\n");
  NcclTestsLog log = first != std::string::npos && text[first] == '{'
                         ? parse_nccl_tests_json(text, file.string())
                         : parse_nccl_tests_text(text, file.string());
  log.content_hash = fnv1a64_hex(text);
  return log;
}

std::optional<config::CollectiveSample> sample_of(const NcclTestsLog& log, const NcclTestsRow& row) {
  const NcclTestsTiming& t = row.out_of_place.present ? row.out_of_place : row.in_place;
  if (row.size_bytes <= 0 || !(t.time_us > 0)) return std::nullopt;
  return config::CollectiveSample{.kind = log.kind,
                                  .ranks = log.rank_count,
                                  .nodes = log.node_count,
                                  .bytes = row.size_bytes,
                                  .duration_s = t.time_us * 1e-6,
                                  .algorithm = log.algorithm};
}

std::vector<config::CollectiveSample> samples_of(const NcclTestsLog& log) {
  std::vector<config::CollectiveSample> samples;
  for (const NcclTestsRow& row : log.rows) {
    if (const std::optional<config::CollectiveSample> sample = sample_of(log, row))
      samples.push_back(*sample);
  }
  return samples;
}

std::string describe(const NcclTestsLog& log) {
  std::set<std::string> devices;
  for (const NcclTestsRank& r : log.ranks) {
    if (!r.device_name.empty()) devices.insert(r.device_name);
  }
  std::string text = fmt::format("{}, {} ranks on {} node{}", log.program, log.rank_count, log.node_count,
                                 log.node_count == 1 ? "" : "s");
  if (!devices.empty()) text += fmt::format(" ({})", fmt::join(devices, ", "));
  if (!log.nccl_version.empty()) text += ", NCCL " + log.nccl_version;
  if (!log.nccl_algo.empty()) text += ", NCCL_ALGO=" + log.nccl_algo;
  return text;
}

std::optional<config::CollectiveAlgorithm> pinned_algorithm(std::string_view nccl_algo) {
  std::string name;
  for (const char c : nccl_algo) {
    if (c != ' ') name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const auto& [algorithm, spelling] : config::EnumNames<config::CollectiveAlgorithm>::kNames) {
    if (name == spelling) return algorithm;
  }
  return std::nullopt;
}

}  // namespace trainsim::calibrate
