// Summary statistics of repeated timings: what the harness keeps of each measured case.
#ifndef TRAINSIM_CALIBRATE_STATISTICS_H_
#define TRAINSIM_CALIBRATE_STATISTICS_H_

#include <vector>

namespace trainsim::calibrate {

// Durations of one case over its timed repetitions, in seconds. The median is the number profiles
// keep (robust to the odd preempted repetition); the rest says how much to trust it.
struct Summary {
  int repetitions = 0;
  double median_s = 0;
  double mean_s = 0;
  double min_s = 0;
  double max_s = 0;
  double p10_s = 0;  // 10th and 90th percentiles (nearest rank)
  double p90_s = 0;
  double cv = 0;  // coefficient of variation: population standard deviation / mean
};

// Summarises `durations_s` (one entry per repetition). Throws std::invalid_argument when it is
// empty or holds a value that is not positive and finite.
Summary summarize(std::vector<double> durations_s);

// The median of `values` (the mean of the two middle ones for an even count). Throws
// std::invalid_argument when `values` is empty.
double median(std::vector<double> values);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_STATISTICS_H_
