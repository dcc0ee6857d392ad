// Progress of a sweep on stderr: points done of the total, the rate, the time left and the best
// result so far (highest tokens/s among the points that fit). On a terminal one line is redrawn in
// place as a bar; otherwise (a log file, a batch job) a plain line is printed every so often.
#ifndef TRAINSIM_SIM_SWEEP_PROGRESS_H_
#define TRAINSIM_SIM_SWEEP_PROGRESS_H_

#include <chrono>
#include <cstddef>
#include <map>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace trainsim::sweep {

struct ProgressState {
  size_t done = 0;   // finished in this run
  size_t total = 0;  // to evaluate in this run
  double elapsed_s = 0;
  std::map<std::string, size_t> by_status;  // "ok" -> count, ...
  double best_tokens_per_s = 0;             // 0 until a point is ok
  std::string best_point;                   // its id and values, "a1b2c3d4e5f6 (tp=8 pp=2)"

  // "37/120 points (31%), 2.4 points/s, 35 s left; ok 30, infeasible 7; best 1.23e+05 tokens/s at
  // a1b2c3d4e5f6 (tp=8 pp=2)". The rate and time left appear once a point is done.
  std::string summary() const;
  // A bar of `width` characters for the fraction done: "[#####.....]".
  std::string bar(size_t width) const;
};

class Progress {
 public:
  // Reports to `out`. `live`: redraw one line in place (a terminal); otherwise print summary()
  // lines at most every `interval_s` seconds.
  Progress(std::ostream& out, size_t total, bool live, double interval_s = 10);

  // One point finished with `result` (an object of sim/sweep/evaluate.h).
  void update(const nlohmann::json& result);
  // The final line (always printed).
  void finish();
  const ProgressState& state() const { return state_; }

 private:
  void print(bool final);

  std::ostream& out_;
  bool live_;
  double interval_s_;
  ProgressState state_;
  std::chrono::steady_clock::time_point started_;
  double last_print_s_ = 0;
};

}  // namespace trainsim::sweep

#endif  // TRAINSIM_SIM_SWEEP_PROGRESS_H_
