// The files of a sweep's output directory:
//   sweep.json     what was swept: the sweep's name and hash, axis names, point count, shard, mode
//   results.jsonl  one result object per finished point and line, appended and flushed to disk line
//                  by line, so a killed sweep loses only the points in flight; a torn last line (a
//                  kill mid-write) is detected and dropped when the file is read back
//   results.csv    the same results as a tidy table in point order, units in the column names,
//                  rewritten atomically (temporary file + rename) from results.jsonl
#ifndef TRAINSIM_SIM_SWEEP_RESULTS_H_
#define TRAINSIM_SIM_SWEEP_RESULTS_H_

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::sweep {

// A problem with an output directory or the files in it (another sweep's results, a corrupt line,
// shards that do not add up): what() says what and how to fix it.
class SweepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr const char* kResultsJsonl = "results.jsonl";
inline constexpr const char* kResultsCsv = "results.csv";
inline constexpr const char* kSweepJson = "sweep.json";

// What a results directory holds, as sweep.json records it.
struct SweepManifest {
  std::string name;
  std::string sweep_file;  // as given on the command line
  std::string hash;        // ExpandedSweep::hash
  std::vector<std::string> axis_names;
  size_t points = 0;  // in the whole sweep, every shard together
  std::string mode;   // "simulated" | "analytic"
  std::string network;
  bool full = false;         // simulated with every rank (sweep --full)
  bool all_traffic = false;  // simulated with every rank's traffic (sweep --all-traffic)
  size_t shard_index = 0, shard_count = 1;

  // How the points were evaluated, as messages say it: "analytic", "simulated (simgrid network)",
  // "simulated (simgrid network, every rank)", "simulated (simgrid network, every rank's traffic)".
  // Results evaluated differently do not mix.
  std::string evaluation() const;

  nlohmann::json to_json() const;
  // Throws SweepError naming `source` when a key is missing or mistyped.
  static SweepManifest from_json(const nlohmann::json& json, const std::string& source);
};

// Reads DIR/sweep.json. Throws SweepError when it is missing or unreadable.
SweepManifest read_manifest(const std::filesystem::path& dir);
// Writes DIR/sweep.json atomically.
void write_manifest(const std::filesystem::path& dir, const SweepManifest& manifest);

// The complete lines of a results.jsonl (none when the file does not exist). A last line without
// its newline, or one that is not a JSON object, is a write cut short: it is left out and
// `*torn_bytes` (if given) says how long it was. Any other bad line throws SweepError naming the
// file and line.
std::vector<nlohmann::json> read_results(const std::filesystem::path& jsonl, size_t* torn_bytes = nullptr);

// Appends result lines to a results.jsonl, each written whole and flushed to disk before append()
// returns.
class ResultsLog {
 public:
  // Opens `jsonl` for appending, creating it; first cuts off a torn last line (see read_results).
  // Throws SweepError when it cannot.
  explicit ResultsLog(const std::filesystem::path& jsonl);
  ~ResultsLog();
  ResultsLog(const ResultsLog&) = delete;
  ResultsLog& operator=(const ResultsLog&) = delete;

  // Writes `result` as one line and fsyncs. Throws SweepError on a write error (disk full).
  void append(const nlohmann::json& result);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

// The results sorted by point index.
std::vector<nlohmann::json> in_point_order(std::vector<nlohmann::json> results);

// The tidy table of `results` (in the order given): one row per point with its index, id and axis
// values, then status, reason, mode and the metrics (empty where a point has none).
std::string results_csv(const std::vector<std::string>& axis_names,
                        const std::vector<nlohmann::json>& results);

// Rewrites DIR/results.csv atomically from DIR/results.jsonl, in point order.
void write_results_csv(const std::filesystem::path& dir, const std::vector<std::string>& axis_names);

}  // namespace trainsim::sweep

#endif  // TRAINSIM_SIM_SWEEP_RESULTS_H_
