// The benchmark table: one row per kernel and shape, with its rate beside the ceiling measured in the
// same run, printed as Markdown (so it pastes into kernels/PERFORMANCE.md).
#ifndef TRAINSIM_KERNELS_BENCH_REPORT_H_
#define TRAINSIM_KERNELS_BENCH_REPORT_H_

#include <ostream>
#include <string>
#include <vector>

namespace trainsim::kernels::bench {

struct Row {
  std::string kernel;
  std::string shape;
  double time_ms = 0.0;
  double tflops = 0.0;            // 0 when the kernel is judged by bandwidth
  double gbps = 0.0;              // bytes moved / time, 0 when judged by FLOP/s
  double ceiling_fraction = 0.0;  // tflops / GEMM ceiling, or gbps / copy ceiling
  std::string verified;           // "ok ...", "skipped", or "FAILED ..." with what failed
};

class Report {
 public:
  // Appends a row and echoes it to stderr at once, so a run that dies later still shows it.
  void add(Row row);
  // Free-form lines printed above the table (device, ceilings, seeds).
  void note(std::string line) { notes_.push_back(std::move(line)); }
  // Records a section that threw (e.g. a CUDA error) as a FAILED row, so the run goes on to the next.
  void failed(const std::string& section, const std::string& error);
  // True when no row's verification starts with "FAILED".
  bool all_verified() const;
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> notes_;
  std::vector<Row> rows_;
};

}  // namespace trainsim::kernels::bench

#endif  // TRAINSIM_KERNELS_BENCH_REPORT_H_
