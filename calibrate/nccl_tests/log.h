// One nccl-tests run (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf,
// sendrecv_perf) as read from its text output or its JSON output (-J, nccl-tests 2.17+): who ran
// (ranks, hosts, devices) and the table of sizes and times.
#ifndef TRAINSIM_CALIBRATE_NCCL_TESTS_LOG_H_
#define TRAINSIM_CALIBRATE_NCCL_TESTS_LOG_H_

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/hardware.h"

namespace trainsim::calibrate {

struct NcclTestsRank {
  int rank = 0;
  std::string host;
  int device = 0;
  std::string device_name;  // e.g. "NVIDIA H100 80GB HBM3"
};

// The out-of-place or in-place half of a row.
struct NcclTestsTiming {
  bool present = false;
  double time_us = 0;
  double algbw_gbps = 0;  // GB/s = 1e9 bytes/s, as nccl-tests prints
  double busbw_gbps = 0;
  std::optional<double> wrong;  // "#wrong"; empty when not checked (N/A)
};

struct NcclTestsRow {
  double size_bytes = 0;  // nccl-tests "size"
  double count = 0;       // elements
  std::string type;
  std::string redop;
  std::string root;
  NcclTestsTiming out_of_place;
  NcclTestsTiming in_place;
  int line = 0;   // 1-based line of the row (text), 0 for JSON
  int index = 0;  // position in the JSON "results" list
};

struct NcclTestsLog {
  std::string file;          // as named on the command line
  std::string content_hash;  // of the file's bytes (fnv1a64)
  std::string program;       // "all_reduce_perf"
  config::CollectiveKind kind = config::CollectiveKind::kAllReduce;
  std::vector<NcclTestsRank> ranks;
  int rank_count = 0;        // every rank of the run (JSON logs list one device per process)
  int node_count = 0;        // distinct host names
  std::string nccl_version;  // "2.21.5" when the log says
  std::string nccl_algo;     // NCCL_ALGO of the run's environment (JSON "env"); "" when unset or unknown
  // The one algorithm the table was timed with (NCCL_ALGO naming a single ring, tree or nvls, or the
  // importer's --algorithm); empty: NCCL's own choice at each size.
  std::optional<config::CollectiveAlgorithm> algorithm;
  std::string parameters;  // nccl-tests' "# nThread ..." line, or the JSON args
  std::vector<NcclTestsRow> rows;
  double average_busbw_gbps = 0;
};

// Reads `file` as nccl-tests output, JSON when its first non-blank character is '{', text
// otherwise. Throws config::ConfigError located at file:line:col (JSON: at the key path) when the
// file cannot be read, is truncated or garbled, or reports failures (wrong elements, out-of-bounds
// values, NCCL errors).
NcclTestsLog read_nccl_tests(const std::filesystem::path& file);

// The profile sample of one row of `log`: its out-of-place time (the in-place time where nccl-tests
// reports no out-of-place one), `ranks`, `nodes` and `algorithm` from the log; none for a row of
// size 0 or without a positive time.
std::optional<config::CollectiveSample> sample_of(const NcclTestsLog& log, const NcclTestsRow& row);

// Profile samples of a log: sample_of every row that has one.
std::vector<config::CollectiveSample> samples_of(const NcclTestsLog& log);

// "all_reduce_perf, 16 ranks on 2 nodes (NVIDIA H100 80GB HBM3), NCCL 2.21.5, NCCL_ALGO=Ring"
std::string describe(const NcclTestsLog& log);

// The algorithm an NCCL_ALGO value pins: one of Ring, Tree or NVLS (any case); empty for a list, an
// exclusion ("^NVLS"), a per-collective setting or an algorithm trainsim does not model (PAT,
// CollNet*, NVLSTree).
std::optional<config::CollectiveAlgorithm> pinned_algorithm(std::string_view nccl_algo);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_NCCL_TESTS_LOG_H_
