// A located view of YAML input for the decoders. A Node stacks layers of YAML, highest priority
// first: `--set` overrides, then the file, then the files it `extends`. Each layer remembers the file
// it came from, so every value (and every error about it) has an exact file:line:col, and relative
// paths resolve against the file that wrote them.
//
// Decoders read maps through MapReader, which records every key it is asked about; `finish()` then
// reports keys nobody asked about as unknown, with a did-you-mean among the keys that were asked for.
#ifndef TRAINSIM_SIM_CONFIG_NODE_H_
#define TRAINSIM_SIM_CONFIG_NODE_H_

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/config/diagnostics.h"
#include "sim/config/types.h"
#include "sim/config/units.h"

namespace trainsim::config {

// Where a layer of YAML came from.
struct Source {
  std::string name;           // shown in locations: the file as the user would name it, or "--set k=v"
  std::filesystem::path dir;  // relative paths in this layer resolve against it
  int column_offset = 0;      // added to columns (a --set value starts after "key=")
};

struct Layer {
  YAML::Node node;
  std::shared_ptr<const Source> source;
};

class Node {
 public:
  // `anchor` locates a missing node (where its parent is), so "missing key" errors have a position.
  Node(std::vector<Layer> layers, std::string path, Diagnostics* diagnostics, Location anchor = {});

  // False when no layer has a value here (a missing key).
  bool defined() const { return !layers_.empty(); }
  bool is_map() const { return defined() && layers_.front().node.IsMap(); }
  bool is_sequence() const { return defined() && layers_.front().node.IsSequence(); }
  bool is_scalar() const { return defined() && layers_.front().node.IsScalar(); }
  // Dotted path from the file root, e.g. "parallelism.fpdt.chunk_tokens"; "" for the root.
  const std::string& path() const { return path_; }
  // The dotted path of `key` below this node.
  std::string child_path(std::string_view key) const;
  // The position of the winning value (for a missing node: its nearest existing ancestor's).
  Location location() const;
  // The scalar text of the winning value (empty when not a scalar).
  std::string scalar() const;
  // The elements of a sequence (from the winning layer only: lists replace, never merge).
  std::vector<Node> elements() const;
  // The directory relative paths resolve against.
  const std::filesystem::path& base_dir() const;
  // The node at `path` below this one: keys separated by dots, list elements by [index]
  // ("stragglers.slow_gpus[0].ranks[1]"). Reading it records nothing (no key becomes known); where the
  // path leaves the input, the node is undefined and located at the deepest node the input has.
  Node find(std::string_view path) const;

  // Records an error located at this node.
  void error(std::string message) const;
  Diagnostics* diagnostics() const { return diagnostics_; }
  const std::vector<Layer>& layers() const { return layers_; }

 private:
  std::vector<Layer> layers_;
  std::string path_;
  Diagnostics* diagnostics_;
  Location anchor_;
};

// Inclusive bounds for numbers.
struct IntRange {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
};
struct RealRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
};
inline constexpr IntRange kPositive{1};
inline constexpr IntRange kNonNegative{0};
inline constexpr RealRange kPositiveReal{0, std::numeric_limits<double>::infinity(), true};

// Typed decoding of one node. Each returns false (after recording a located error) when the value
// is not of the expected type or range; `out` is then unchanged.
bool decode(const Node& node, int64_t& out, IntRange range = {});
bool decode(const Node& node, int& out, IntRange range = {});
bool decode(const Node& node, double& out, RealRange range = {});
bool decode(const Node& node, bool& out);
bool decode(const Node& node, std::string& out);
// A quantity with a unit ("80GiB"); `range` applies to the value in base units.
bool decode(const Node& node, double& out, QuantityKind kind, RealRange range = {});
// A count that may carry a binary suffix ("2Mi").
bool decode_count(const Node& node, int64_t& out, IntRange range = {});
// A percentage: "12%" -> 0.12, "0%" -> 0, at most `max_percent` percent. Records a located error and
// returns false for anything else (a bare number, a negative or larger one).
bool decode_percent(const Node& node, double& out,
                    double max_percent = std::numeric_limits<double>::infinity());
// A path, resolved against the directory of the file that wrote it and normalised.
bool decode(const Node& node, std::filesystem::path& out);
// A list of strings. When `node` is not a list, records "expected <what>" (e.g. what = "a list of
// case ids") and returns false; otherwise appends every element that is a string to `out` (each
// other one recorded as an error) and returns whether all were.
bool decode(const Node& node, std::vector<std::string>& out, std::string_view what);

// "unknown value "X" (did you mean "Y"?); expected one of: a, b, c".
std::string unknown_choice_message(const std::string& value, const std::vector<std::string>& choices);

template <class E>
requires requires { EnumNames<E>::kNames; }
bool decode(const Node& node, E& out) {
  std::string text;
  if (!decode(node, text)) return false;
  std::vector<std::string> names;
  for (const auto& [value, name] : EnumNames<E>::kNames) {
    if (name == text) {
      out = value;
      return true;
    }
    names.emplace_back(name);
  }
  node.error(unknown_choice_message(text, names));
  return false;
}

class MapReader {
 public:
  // Records an error when `node` is defined but not a map (every read then finds nothing), and one
  // for each duplicated key.
  explicit MapReader(const Node& node);

  const Node& node() const { return node_; }
  bool has(std::string_view key);
  // The value at `key` (undefined when missing). Marks the key as known.
  Node child(std::string_view key);

  // Reads an optional key: leaves `out` (the default) alone when the key is missing.
  template <class T, class... Extra>
  bool read(std::string_view key, T& out, Extra&&... extra) {
    const Node value = child(key);
    return value.defined() && decode(value, out, std::forward<Extra>(extra)...);
  }
  // Reads an optional key whose absence means "the default decided elsewhere": `out` is set only
  // when the key is there and valid.
  template <class T, class... Extra>
  bool read(std::string_view key, std::optional<T>& out, Extra&&... extra) {
    T value{};
    if (!read(key, value, std::forward<Extra>(extra)...)) return false;
    out = value;
    return true;
  }
  // Reads a required key: a missing key is an error located at this map.
  template <class T, class... Extra>
  bool require(std::string_view key, T& out, Extra&&... extra) {
    const Node value = child(key);
    if (!value.defined()) {
      missing(key);
      return false;
    }
    return decode(value, out, std::forward<Extra>(extra)...);
  }
  bool read_count(std::string_view key, int64_t& out, IntRange range = {});
  bool require_count(std::string_view key, int64_t& out, IntRange range = {});

  // Records "missing required key" for `key`, located at this map; nothing when the map itself is
  // missing (its parent reports that).
  void missing(std::string_view key) const;
  // Reports every key that no read asked about. Call once, after all reads.
  void finish();

 private:
  Node node_;
  std::set<std::string, std::less<>> known_;
};

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_NODE_H_
