// Writes nccl-tests output (the text of v2.x and the -J JSON) for a collective whose times follow a
// known piecewise alpha-beta model: the fixtures of the importer's tests, in the exact format of
// NVIDIA/nccl-tests src/util.cu, so the tests can check what the import recovers.
#ifndef TRAINSIM_TESTS_CALIBRATE_NCCL_TESTS_WRITER_H_
#define TRAINSIM_TESTS_CALIBRATE_NCCL_TESTS_WRITER_H_

#include <string>
#include <vector>

#include "sim/config/types.h"

namespace trainsim::calibrate::testing {

// time = latency + size · busbw factor / bus_bandwidth, for sizes in [min_bytes, max_bytes].
struct ModelRange {
  double min_bytes = 0;
  double max_bytes = 0;
  double latency_s = 0;
  double bus_bandwidth_bytes_per_s = 0;
};

struct SyntheticRun {
  config::CollectiveKind kind = config::CollectiveKind::kAllReduce;
  int nodes = 1;
  int gpus_per_node = 8;
  std::string device_name = "NVIDIA H100 80GB HBM3";
  double min_bytes = 8;
  double max_bytes = 1 << 30;
  std::vector<ModelRange> model;  // covering [min_bytes, max_bytes]
  int nccl_version_code = 22105;
  std::string nccl_algo;  // NCCL_ALGO in the JSON log's env; "" leaves it unset
};

// The time the model gives for a row of nccl-tests size `bytes`.
double model_time_s(const SyntheticRun& run, double bytes);

// The size nccl-tests prints for a requested size (counts round down to whole floats per rank).
double printed_size(const SyntheticRun& run, double requested_bytes);

// nccl-tests' stdout, one process per node (mpirun), nThread 1, nGpus gpus_per_node.
std::string nccl_tests_text(const SyntheticRun& run);
// nccl-tests' -J output of the same run (one device entry per process).
std::string nccl_tests_json(const SyntheticRun& run);

// The synthetic runs the checked-in fixtures hold (tests/calibrate/fixtures/README.md).
struct Fixture {
  std::string file;  // name under tests/calibrate/fixtures/
  SyntheticRun run;
  bool json = false;
};
std::vector<Fixture> fixtures();

}  // namespace trainsim::calibrate::testing

#endif  // TRAINSIM_TESTS_CALIBRATE_NCCL_TESTS_WRITER_H_
