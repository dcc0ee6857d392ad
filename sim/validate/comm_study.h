// The communication accounting of Anthony et al. 2024 ("Demystifying the Communication
// Characteristics for Distributed Transformer Models"; seed-papers.md Part B): for one model and GPU
// count, the communication of each parallel scheme they study (DP, ZeRO-1/2/3, TP, PP) from the
// workload's communication logs (workload/comm_log.h) beside the closed forms
// (analytic/comm_volume.h): volume per rank and its ratio to DP, the volume by collective, the
// message-size histogram, volume against sequence length, and the share of small messages.
//
// Every scheme spreads the same global batch (one micro-batch per GPU under pure data parallelism,
// so that ZeRO-3 / DP is the paper's 1.5) over all the scenario's GPUs:
//   DP, ZeRO-1/2/3  dp = GPUs with that ZeRO stage
//   TP              tp = the largest degree dividing the heads and the GPUs, at most one node
//   PP              pp = the largest degree dividing the layers and the GPUs (1F1B)
// the rest of each is data parallelism; no sequence parallelism; recomputation as in the scenario.
#ifndef TRAINSIM_SIM_VALIDATE_COMM_STUDY_H_
#define TRAINSIM_SIM_VALIDATE_COMM_STUDY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "sim/analytic/comm_volume.h"
#include "sim/config/scenario.h"
#include "sim/workload/comm_log.h"

namespace trainsim::validate {

// Per-rank communication volume of rank 0's graph: Σ volume_bytes over its communication log (the
// seed paper's view: all-reduce 2m, all-gather m, ...; comm_log.h).
double rank_volume_bytes(const config::Scenario& scenario);

// Messages below this size count as small (where the calibrated alpha-beta curves are far from the
// link's peak; seed-papers.md B5).
inline constexpr double kSmallMessageBytes = 1024.0 * 1024.0;

struct SchemeComm {
  std::string scheme;  // DP, ZeRO-1, ZeRO-2, ZeRO-3, TP, PP
  std::string plan;    // "tp 1 pp 1 dp 8, ZeRO-0"
  int64_t seq_len = 0;
  std::string error;  // set when the scheme cannot be expressed for this model; nothing else is then
  std::vector<workload::CommLogEntry> log;       // rank 0
  std::vector<analytic::ExpectedComm> expected;  // pipeline stage 0
  double volume_bytes = 0;                       // Σ log volume
  double expected_volume_bytes = 0;              // Σ expected volume
};

struct CommStudy {
  std::string scenario;
  int64_t gpus = 0;
  int64_t gpus_per_node = 0;
  int64_t global_batch = 0;
  int64_t micro_batch = 0;
  int64_t seq_len = 0;                  // the scenario's
  std::vector<SchemeComm> schemes;      // at the scenario's sequence length, in the order above
  std::vector<int64_t> sweep_seq_lens;  // seq_len / 4 ... 4 seq_len
  std::vector<SchemeComm> sweep;        // scheme-major: every scheme at every sweep length
};

// Loads the scenario with `extra` (a map of scenario sections, undefined for none) merged on top.
using ScenarioLoader = std::function<config::Scenario(const YAML::Node& extra)>;

// Runs the study on the scenario `load` gives. Only operation graphs are built (no simulation).
// Throws config::ConfigError when the base scenario does not load.
CommStudy study_comm(const ScenarioLoader& load);

nlohmann::json to_json(const CommStudy& study);
std::string render_table(const CommStudy& study);

}  // namespace trainsim::validate

#endif  // TRAINSIM_SIM_VALIDATE_COMM_STUDY_H_
