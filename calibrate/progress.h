// Progress of a calibration run on stderr (never stdout): on a terminal one line redrawn in place,
//   [ 37/120]  30.8% | elapsed 00:01:12 | eta 00:02:41 | gemm bf16 4096x4096x8192
// elsewhere (CI logs, Slurm) a plain line every 10 % of the items or 30 s.
#ifndef TRAINSIM_CALIBRATE_PROGRESS_H_
#define TRAINSIM_CALIBRATE_PROGRESS_H_

#include <cstddef>
#include <cstdio>
#include <string>

namespace trainsim::calibrate {

class Progress {
 public:
  virtual ~Progress() = default;
  // A new sweep of `items` timed items begins (called once, before the first step).
  virtual void start(size_t items) = 0;
  // Item `label` is about to be timed.
  virtual void step(const std::string& label) = 0;
  // Everything is done (clears the terminal line).
  virtual void finish() = 0;
};

// Discards everything (--quiet, tests).
class SilentProgress : public Progress {
 public:
  void start(size_t) override {}
  void step(const std::string&) override {}
  void finish() override {}
};

// Writes to `out` (stderr by default), redrawing when `out` is a terminal whose TERM is not "dumb".
class StderrProgress : public Progress {
 public:
  explicit StderrProgress(std::FILE* out = stderr);
  void start(size_t items) override;
  void step(const std::string& label) override;
  void finish() override;

 private:
  std::string line(const std::string& label) const;

  std::FILE* out_;
  bool redraw_;
  size_t items_ = 0;
  size_t done_ = 0;
  double start_s_ = 0;
  double last_print_s_ = 0;
  size_t last_print_done_ = 0;
};

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_PROGRESS_H_
