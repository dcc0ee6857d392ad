// Importing nccl-tests logs into a hardware profile: the collective tables of a cluster the user
// already has (run nccl-tests across its nodes, import the logs), on top of a profile of its GPU.
#ifndef TRAINSIM_CALIBRATE_NCCL_TESTS_IMPORT_H_
#define TRAINSIM_CALIBRATE_NCCL_TESTS_IMPORT_H_

#include <string>
#include <vector>

#include "calibrate/nccl_tests/log.h"
#include "calibrate/profile/document.h"
#include "sim/config/hardware.h"

namespace trainsim::calibrate {

struct ImportOptions {
  std::string name;          // of the new profile; empty: "<base name>-nccl"
  std::string base_label;    // how sources and notes name the base (its file name)
  std::string date;          // ISO 8601, UTC
  std::string tool_version;  // "trainsim 0.1.0 (git abc1234)"
  std::string command;
  // The algorithm every log was timed with: "" reads each log's NCCL_ALGO (JSON logs; a text log
  // does not record it: NCCL's choice); "auto" is NCCL's own choice; "ring", "tree" or "nvls" one of
  // those (NCCL_ALGO set for a text log).
  std::string algorithm;
};

// A new profile: `base` (every value and source kept) whose collective samples for the (collective,
// ranks, nodes, algorithm) groups of `logs` are replaced by the logs' rows, and re-fitted. Every
// imported row and fit is sourced "imported: FILE (program, ranks, nodes, hash)"; rows and fits kept
// from the base keep the base's sources. Throws std::invalid_argument when two logs cover the same
// group, when `options.algorithm` is not one of its spellings, or when a log's NCCL_ALGO pins no one
// algorithm trainsim models and `options.algorithm` does not say how to read it.
ProfileDocument import_nccl_tests(const config::HardwareProfile& base, const std::vector<NcclTestsLog>& logs,
                                  const ImportOptions& options);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_NCCL_TESTS_IMPORT_H_
