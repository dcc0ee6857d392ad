#include "kernels/bench/report.h"

#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace trainsim::kernels::bench {

namespace {

std::string fixed(double value, int digits) {
  if (value == 0.0 || !std::isfinite(value)) {  // not applicable, or no ceiling measured in this run
    return "";
  }
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << value;
  return s.str();
}

}  // namespace

void Report::add(Row row) {
  std::cerr << "bench: " << row.kernel << " | " << row.shape << " | " << row.time_ms << " ms | " << row.tflops
            << " TFLOP/s | " << row.gbps << " GB/s | " << row.verified << std::endl;
  rows_.push_back(std::move(row));
}

void Report::failed(const std::string& section, const std::string& error) {
  add({section, "", 0.0, 0.0, 0.0, 0.0, "FAILED: " + error});
}

bool Report::all_verified() const {
  for (const Row& row : rows_) {
    if (row.verified.rfind("FAILED", 0) == 0) {
      return false;
    }
  }
  return true;
}

void Report::print(std::ostream& out) const {
  for (const std::string& line : notes_) {
    out << line << "\n";
  }
  out << "\n| kernel | shape | time (ms) | TFLOP/s | GB/s | of ceiling | verified |\n"
      << "|---|---|---:|---:|---:|---:|---|\n";
  for (const Row& row : rows_) {
    const std::string percent = fixed(100.0 * row.ceiling_fraction, 1);
    out << "| " << row.kernel << " | " << row.shape << " | " << fixed(row.time_ms, 3) << " | "
        << fixed(row.tflops, 1) << " | " << fixed(row.gbps, 0) << " | " << percent
        << (percent.empty() ? "" : " %") << " | " << row.verified << " |\n";
  }
}

}  // namespace trainsim::kernels::bench
