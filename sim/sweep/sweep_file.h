// Sweep files: a base scenario plus axes of values to try, combined by cross product or element by
// element, and filters that drop combinations. Decoded with sim/config's located readers, so every
// problem is reported as `file:line:col: error: key: message` like in the other inputs.
//
//   schema_version: 1
//   name: llama3-8b-fpdt-seq-len
//   base: ../05-llama3-8b-fpdt-2m-4xa100.yaml   # a scenario; paths are relative to this file
//   set: {parallelism.fpdt.offload: true}        # overrides applied to every point (like --set)
//   axes:                                        # cross product, the first axis varying slowest
//     - {key: model.seq_len, values: [128Ki, 256Ki, 512Ki]}
//     - {key: parallelism.tp, range: {from: 1, to: 8, times: 2}}     # 1 2 4 8 (or step: N)
//     - zip:                                     # element by element (equal lengths)
//         - {key: parallelism.pp, values: [1, 2, 4]}
//         - {key: parallelism.dp, values: [8, 4, 2]}
//     - product: [...]                           # a nested cross product (e.g. inside a zip)
//   filter: ["tp * pp <= 64", "seq_len / parallelism.fpdt.chunk_tokens >= 2"]
//
// An axis's `name` (default: the last part of its key) is how filters and the results' columns
// call it. Filters may also name any scenario key (`model.heads`, `cluster.gpus`): axis keys take the
// point's value, other keys the base scenario's (or the value `set` gives them).
#ifndef TRAINSIM_SIM_SWEEP_SWEEP_FILE_H_
#define TRAINSIM_SIM_SWEEP_SWEEP_FILE_H_

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/config/diagnostics.h"
#include "sim/config/scenario.h"
#include "sim/config/settings.h"
#include "sim/sweep/expression.h"

namespace trainsim::sweep {

// One value of an axis as written, and where.
struct AxisValue {
  std::string text;  // the YAML scalar, used as the override's value
  config::Location location;
};

struct Axis {
  std::string name;  // identifier for filters and result columns
  std::string key;   // the dotted scenario key the values override
  std::vector<AxisValue> values;
};

// A node of the axes tree: one axis, or a group combining its members.
struct AxisGroup {
  enum class Kind { kAxis, kProduct, kZip };
  Kind kind = Kind::kAxis;
  Axis axis;                       // kAxis
  std::vector<AxisGroup> members;  // kProduct, kZip
};

struct Filter {
  std::string path;  // in the file: "filter" or "filter[2]"
  std::string text;
  Expression expression;
  config::Location location;  // of the expression's first character
};

// A dotted scenario key and its value as a point sets it, and where it was written.
using Setting = config::Setting;

struct SweepFile {
  std::filesystem::path path;  // absolute, normalised
  std::string display_name;    // as messages show it
  std::string name;
  std::string description;
  std::string content_hash;       // of the sweep file's bytes
  std::filesystem::path base;     // the base scenario, absolute
  std::string base_text;          // as written (relative to the sweep file's directory)
  std::string base_hash;          // of the base scenario, its topology and hardware profile
  std::string base_content_hash;  // of the base scenario file alone (Scenario::content_hash)
  std::vector<Setting> set;       // settings every point gets
  AxisGroup axes;                 // a product of the top-level entries
  std::vector<Filter> filters;
  // Every key of the base scenario (fully resolved) with its value, `set` values replacing theirs,
  // for filters.
  std::map<std::string, Value> base_fields;

  // The axes in the order they were written (depth first).
  std::vector<const Axis*> axis_list() const;
};

// Reads, decodes and checks `path`, loads its base scenario and checks the values of `set` (the
// rules across keys are checked per point, with its axis values). Throws config::ConfigError carrying
// every problem found (problems of a `set` value are located at it).
SweepFile load_sweep(const std::filesystem::path& path);

// The base scenario of `sweep` with `settings` on top, as if given with --set (and checked the same
// way), relative paths in their values resolving against the sweep file's directory. Problems are
// located at the settings in the sweep file. Throws config::ConfigError.
config::Scenario load_point_scenario(const SweepFile& sweep, const std::vector<Setting>& settings);

// A scalar as filters see it: a number when it reads as one (counts with binary suffixes, plain
// numbers, true/false as 1/0, quantities with units in base units), a string otherwise.
Value scalar_value(const std::string& text);

}  // namespace trainsim::sweep

#endif  // TRAINSIM_SIM_SWEEP_SWEEP_FILE_H_
