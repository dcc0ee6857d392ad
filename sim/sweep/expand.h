// Expansion of a sweep file into its points, deterministically: the cross product of the top-level
// axes with the first axis varying slowest (zip groups advance together), minus what the filters
// drop. A point's index is its position in that order; its id is a hash of its axis values alone,
// so it stays the same when other values are added to the sweep or the axes are reordered.
#ifndef TRAINSIM_SIM_SWEEP_EXPAND_H_
#define TRAINSIM_SIM_SWEEP_EXPAND_H_

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/diagnostics.h"
#include "sim/sweep/sweep_file.h"

namespace trainsim::sweep {

// The value one axis takes at a point.
struct Coordinate {
  std::string name;  // the axis's name
  std::string key;   // the scenario key it overrides
  std::string text;  // the value as written
  config::Location location;
};

struct Point {
  size_t index = 0;
  std::string id;                       // 12 hex digits
  std::vector<Coordinate> coordinates;  // one per axis, in the sweep's axis order

  // {axis name: value}: numbers (counts with binary suffixes resolved) and booleans typed, other
  // values as strings.
  nlohmann::json values() const;
  // What the point sets on the base scenario: the sweep's fixed settings, then its axis values.
  std::vector<Setting> settings(const SweepFile& sweep) const;
};

struct ExpandedSweep {
  std::vector<std::string> axis_names;  // in axis order (the results' columns)
  std::vector<Point> points;            // in index order
  size_t combinations = 0;              // before the filters
  // Identifies the expanded sweep: the base scenario's inputs, the fixed settings and every point.
  // Shards of one sweep share it.
  std::string hash;
};

// Expands `sweep`. Throws config::ConfigError located at a filter that cannot be evaluated for some
// point (naming the point) or at the axes when two combinations repeat the same values.
ExpandedSweep expand(const SweepFile& sweep);

// The typed form of an axis value (see Point::values).
nlohmann::json typed_value(const std::string& text);

}  // namespace trainsim::sweep

#endif  // TRAINSIM_SIM_SWEEP_EXPAND_H_
