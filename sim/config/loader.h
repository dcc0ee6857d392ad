// Loading the three kinds of input file into typed values. Every function reads, validates and
// cross-checks the whole input and either returns a complete value or throws ConfigError carrying
// every problem found (never only the first), each located as file:line:col with a dotted key path.
//
// Common file rules: `schema_version: 1` is required; unknown keys are errors with a did-you-mean;
// quantities carry units ("80GiB", "400Gbps", "1.5us"); `extends: OTHER.yaml` inherits every key of
// another file of the same kind (keys here win, maps merge, lists replace); paths are relative to the
// file that names them; reference cycles and missing files are reported at the referring key.
#ifndef TRAINSIM_SIM_CONFIG_LOADER_H_
#define TRAINSIM_SIM_CONFIG_LOADER_H_

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/diagnostics.h"
#include "sim/config/hardware.h"
#include "sim/config/node.h"
#include "sim/config/scenario.h"
#include "sim/config/topology.h"

namespace trainsim::config {

// One `--set dotted.key=value` override from the command line. The value is parsed as YAML, so
// `--set parallelism.tp=4` and `--set model.preset=llama3-8b` both work.
struct Override {
  std::string text;  // as typed, used as the error location
  std::string key;   // dotted path
  std::string value;
};

// Splits "dotted.key=value". Throws ConfigError when there is no '=' or the key is empty.
Override parse_override(std::string_view text);

// Every kind of input file the project reads. The loaders of the last four live above config (validate,
// sweep, calibrate); detect_file_kind only tells them apart.
enum class FileKind {
  kScenario,
  kTopology,
  kHardware,
  kCluster,
  kValidationCase,
  kValidationSuite,
  kSweep,
  kNetworkPart,
  kAccuracy,  // the validation's errors by regime (sim/validate/accuracy.h)
};

// Which kind of file `path` is, from its top-level keys (a cluster file has `jobs`, a validation case
// `validation`, a suite `suite`, a sweep `axes`, a network part `tier`, an accuracy file `regimes`). Throws
// ConfigError when it cannot be read, is not YAML, or matches no kind.
FileKind detect_file_kind(const std::filesystem::path& path);

// Loads a scenario and the topology and hardware profile it references, with the scenario's what-if
// maps (cluster.topology_set, cluster.hardware_set) over those. `overrides` apply on top of each file
// (and of what it extends) and are checked like file content; on a topology or hardware profile they
// are what-ifs too (listed in its `what_if`).
Scenario load_scenario(const std::filesystem::path& path, const std::vector<Override>& overrides = {});
Topology load_topology(const std::filesystem::path& path, const std::vector<Override>& overrides = {});
HardwareProfile load_hardware(const std::filesystem::path& path, const std::vector<Override>& overrides = {});

// The same with `set`, a what-if map read from another file (a cluster file's topology_set or
// hardware_set; what_if.h), over the file instead of overrides. `set` may be undefined.
Topology load_topology(const std::filesystem::path& path, const Node& set);
HardwareProfile load_hardware(const std::filesystem::path& path, const Node& set);

// The same, from `text` held in memory instead of a file. `path` stands for the file: messages name
// it, and relative references (extends, cluster.topology, cluster.hardware) resolve against its
// directory and are read from disk; `path` itself is never read. For callers that already hold the
// content (editors, fuzzing).
Scenario load_scenario_text(const std::string& text, const std::filesystem::path& path,
                            const std::vector<Override>& overrides = {});
Topology load_topology_text(const std::string& text, const std::filesystem::path& path,
                            const std::vector<Override>& overrides = {});
HardwareProfile load_hardware_text(const std::string& text, const std::filesystem::path& path,
                                   const std::vector<Override>& overrides = {});

// The layers of an input file of a kind decoded outside config/ (a cluster file): read with the limits
// of every input (size, regular file), `schema_version` checked, its `extends` chain followed. Records
// problems in `diagnostics`; nullopt when nothing usable could be read. `overrides` apply on top, as
// for the other kinds. `content_hash`, when given, receives the hash of the files' bytes.
std::optional<Node> load_input_file(const std::filesystem::path& path, const std::vector<Override>& overrides,
                                    Diagnostics& diagnostics, std::string* content_hash = nullptr);

// The same from `text` held in memory: `path` stands for the file as in load_scenario_text (messages
// name it; an `extends` resolves against its directory and is read from disk).
std::optional<Node> load_input_text(const std::string& text, const std::filesystem::path& path,
                                    Diagnostics& diagnostics);

// A file's name as messages show it: relative to the working directory when that is shorter.
std::string display_name(const std::filesystem::path& path);

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_LOADER_H_
