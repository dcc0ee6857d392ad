#include "sim/config/loader.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/common/hash.h"
#include "sim/config/decode.h"
#include "sim/config/limits.h"

namespace trainsim::config {
namespace {

constexpr int kSchemaVersion = 1;

std::filesystem::path normalised(const std::filesystem::path& path) {
  return std::filesystem::absolute(path).lexically_normal();
}

// The stack of YAML layers for one input: overrides first, then the file, then what it extends.
struct Document {
  std::vector<Layer> layers;
  std::string content_hash;  // over the bytes of every file in the chain
};

class DocumentLoader {
 public:
  explicit DocumentLoader(Diagnostics* diagnostics) : diagnostics_(diagnostics) {}

  // Loads `path` and its `extends` chain. `referrer` locates the key that named the file (for
  // unreadable files); unset for the file given on the command line. Returns false when nothing
  // usable was loaded.
  bool load(const std::filesystem::path& path, const Location& referrer, const std::string& referrer_path,
            Document& out) {
    const std::filesystem::path file = normalised(path);
    if (std::find(stack_.begin(), stack_.end(), file) != stack_.end()) {
      std::string cycle;
      for (const auto& f : stack_) cycle += display_name(f) + " -> ";
      diagnostics_->error(referrer, referrer_path,
                          fmt::format("extends cycle: {}{}", cycle, display_name(file)));
      return false;
    }
    const Location where = referrer.file.empty() ? Location{display_name(file)} : referrer;
    std::error_code ec;
    // Devices and pipes are refused before opening: /dev/zero never ends, a FIFO may block forever.
    const bool regular = std::filesystem::is_regular_file(file, ec);
    const uintmax_t size = regular ? std::filesystem::file_size(file, ec) : 0;
    if (regular && !ec && size > static_cast<uintmax_t>(kMaxInputFileBytes)) {
      diagnostics_->error(
          where, referrer_path,
          fmt::format("file \"{}\" is {} bytes, above the limit of {} for an input file; "
                      "is it really a trainsim input?",
                      display_name(file), size,
                      format_quantity(static_cast<double>(kMaxInputFileBytes), QuantityKind::kBytes)));
      return false;
    }
    std::ifstream in;
    if (regular) in.open(file, std::ios::binary);
    std::stringstream bytes;
    if (in) bytes << in.rdbuf();
    if (!regular || !in) {
      diagnostics_->error(where, referrer_path,
                          fmt::format("cannot read file \"{}\" ({})", display_name(file),
                                      !std::filesystem::exists(file, ec) ? "no such file"
                                      : regular                          ? "permission denied"
                                                                         : "not a regular file"));
      return false;
    }
    return load_text(file, bytes.str(), out);
  }

  // Loads `text` as the content of `file` (absolute, normalised) and follows its `extends` chain.
  bool load_text(const std::filesystem::path& file, const std::string& text, Document& out) {
    out.content_hash = fnv1a64_hex(text, out.content_hash);
    auto source = std::make_shared<Source>(Source{display_name(file), file.parent_path(), 0});
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      diagnostics_->error({source->name, e.mark.line + 1, e.mark.column + 1}, "",
                          fmt::format("invalid YAML: {}", e.msg));
      return false;
    }
    const Node node({{root, source}}, "", diagnostics_, Location{source->name, 1, 1});
    if (!root.IsMap()) {
      node.error(
          "expected a map of keys at the top level (a trainsim input file starts with schema_version: 1)");
      return false;
    }
    if (!check_schema_version(node)) return false;
    out.layers.push_back({root, source});
    const YAML::Node extends = root["extends"];
    if (!extends.IsDefined()) return true;
    Diagnostics scratch;  // the reader's own complaints (about other keys) are the decoder's to make
    MapReader reader(Node({{root, source}}, "", &scratch));
    const Node parent_ref = reader.child("extends");
    std::filesystem::path parent;
    if (!decode(parent_ref, parent)) {
      Node(parent_ref.layers(), "extends", diagnostics_, parent_ref.location())
          .error("extends must name one file of the same kind, e.g. extends: base.yaml");
      return false;
    }
    stack_.push_back(file);
    const bool ok = load(parent, parent_ref.location(), "extends", out);
    stack_.pop_back();
    return ok;
  }

 private:
  bool check_schema_version(const Node& root) const {
    Diagnostics scratch;
    MapReader reader(Node(root.layers(), "", &scratch, root.location()));
    const Node version = reader.child("schema_version");
    if (!version.defined()) {
      root.error(fmt::format("missing schema_version; every trainsim input starts with schema_version: {}",
                             kSchemaVersion));
      return false;
    }
    int64_t value = 0;
    const Node located(version.layers(), "schema_version", diagnostics_, version.location());
    if (!decode(located, value)) return false;
    if (value != kSchemaVersion) {
      located.error(fmt::format("unsupported schema_version {}; this trainsim reads version {}{}", value,
                                kSchemaVersion,
                                value > kSchemaVersion ? " (a newer trainsim wrote it)" : ""));
      return false;
    }
    return true;
  }

  Diagnostics* diagnostics_;
  std::vector<std::filesystem::path> stack_;
};

// Turns `--set a.b=value` overrides into layers (the last override has the highest priority).
std::vector<Layer> override_layers(const std::vector<Override>& overrides, Diagnostics& diagnostics) {
  std::vector<Layer> layers;
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  for (const Override& o : overrides) {
    auto source = std::make_shared<Source>(
        Source{fmt::format("--set {}", o.text), cwd, static_cast<int>(o.text.size() - o.value.size())});
    YAML::Node value;
    try {
      value = YAML::Load(o.value);
    } catch (const YAML::Exception& e) {
      diagnostics.error({source->name, 1, e.mark.column + 1 + source->column_offset}, o.key,
                        fmt::format("invalid value: {}", e.msg));
      continue;
    }
    if (!value.IsDefined() || value.IsNull()) {
      diagnostics.error({source->name, 1, 1 + source->column_offset}, o.key,
                        "empty value; write --set key=value");
      continue;
    }
    // Build {a: {b: value}} from the dotted key.
    std::vector<std::string> keys;
    std::stringstream split(o.key);
    for (std::string part; std::getline(split, part, '.');) keys.push_back(part);
    YAML::Node tree = value;
    for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
      YAML::Node map(YAML::NodeType::Map);
      map[*it] = tree;
      tree = map;
    }
    layers.push_back(Layer{tree, source});
  }
  // The last --set wins. Built by copy-construction: assigning a YAML::Node (as shifting elements
  // of a vector does) rebinds the node it shares, which would overwrite earlier layers.
  return std::vector<Layer>(layers.rbegin(), layers.rend());
}

// Loads one file (with `above` stacked over it) into a root Node, or returns nullopt when it could not
// be read. `text`, when given, is the file's content (the file is then not read).
std::optional<Node> load_root(const std::filesystem::path& path, const std::string* text,
                              std::vector<Layer> above, Diagnostics& diagnostics, const Location& referrer,
                              const std::string& referrer_path, std::string* content_hash) {
  Document document;
  DocumentLoader loader(&diagnostics);
  const bool loaded = text != nullptr ? loader.load_text(normalised(path), *text, document)
                                      : loader.load(path, referrer, referrer_path, document);
  if (!loaded) return std::nullopt;
  std::vector<Layer> layers = std::move(above);
  layers.insert(layers.end(), document.layers.begin(), document.layers.end());
  if (content_hash != nullptr) *content_hash = document.content_hash;
  return Node(std::move(layers), "", &diagnostics, Location{document.layers.front().source->name, 1, 1});
}

// What differs between the two kinds of file a scenario names: what a what-if error calls them,
// the example it shows, and their decoder.
template <class T>
struct FileTraits;
template <>
struct FileTraits<Topology> {
  static constexpr std::string_view kName = "topology";
  static constexpr std::string_view kSetExample = "topology_set: {fabric: {oversubscription: 2}}";
  static void decode(const Node& root, Topology& out) { internal::decode_topology(root, out); }
};
template <>
struct FileTraits<HardwareProfile> {
  static constexpr std::string_view kName = "hardware profile";
  static constexpr std::string_view kSetExample = "hardware_set: {gpu: {hbm: {capacity: 141GB}}}";
  static void decode(const Node& root, HardwareProfile& out) { internal::decode_hardware(root, out); }
};

// Loads a topology or hardware profile with `above` (what-if layers: --set overrides, a scenario's or
// cluster file's set) stacked over the file, recording what they set in out.what_if.
template <class T>
bool load_into(const std::filesystem::path& path, const std::string* text, std::vector<Layer> above,
               Diagnostics& diagnostics, const Location& referrer, const std::string& referrer_path, T& out) {
  out.what_if = internal::collect_what_ifs(above);
  const std::optional<Node> root =
      load_root(path, text, std::move(above), diagnostics, referrer, referrer_path, &out.content_hash);
  if (!root) return false;
  const size_t before = diagnostics.count();
  out.path = normalised(path);
  FileTraits<T>::decode(*root, out);
  return diagnostics.count() == before;
}

// `set` (a what-if map read from a scenario or cluster file, possibly undefined) as layers over a file
// of kind T, its mistakes reported to `diagnostics`.
template <class T>
std::vector<Layer> set_layers(const Node& set, Diagnostics& diagnostics) {
  return internal::what_if_layers(Node(set.layers(), set.path(), &diagnostics, set.location()),
                                  FileTraits<T>::kName, FileTraits<T>::kSetExample);
}

// A topology or hardware profile on its own (`trainsim topo`, `check`, a cluster file's), with the
// --set `overrides` and the what-if map `set` (may be null) over it. Throws ConfigError.
template <class T>
T load_from(const std::filesystem::path& path, const std::string* text,
            const std::vector<Override>& overrides, const Node* set) {
  Diagnostics diagnostics;
  T out;
  std::vector<Layer> above = override_layers(overrides, diagnostics);
  if (set != nullptr) {
    for (Layer& layer : set_layers<T>(*set, diagnostics)) above.push_back(std::move(layer));
  }
  load_into(path, text, std::move(above), diagnostics, {}, "", out);
  diagnostics.throw_if_any();
  return out;
}

}  // namespace

Override parse_override(std::string_view text) {
  const size_t eq = text.find('=');
  const std::string name = fmt::format("--set {}", text);
  if (eq == std::string_view::npos) {
    throw_config_error({name, 1, 1}, "", "expected --set dotted.key=value");
  }
  Override o{std::string(text), std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
  if (o.key.empty() || o.key.front() == '.' || o.key.back() == '.' || o.key.find("..") != std::string::npos) {
    throw_config_error({name, 1, 1}, o.key, "expected a dotted key such as parallelism.tp before '='");
  }
  return o;
}

std::string display_name(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec) return path.string();
  const std::filesystem::path relative = path.lexically_proximate(cwd);
  return relative.string().size() < path.string().size() ? relative.string() : path.string();
}

std::optional<Node> load_input_file(const std::filesystem::path& path, const std::vector<Override>& overrides,
                                    Diagnostics& diagnostics, std::string* content_hash) {
  return load_root(path, nullptr, override_layers(overrides, diagnostics), diagnostics, {}, "", content_hash);
}

std::optional<Node> load_input_text(const std::string& text, const std::filesystem::path& path,
                                    Diagnostics& diagnostics) {
  return load_root(path, &text, {}, diagnostics, {}, "", nullptr);
}

FileKind detect_file_kind(const std::filesystem::path& path) {
  Diagnostics diagnostics;
  const std::optional<Node> root = load_root(path, nullptr, {}, diagnostics, {}, "", nullptr);
  diagnostics.throw_if_any();
  const auto has = [&](const char* key) {
    for (const Layer& layer : root->layers()) {
      if (layer.node[key].IsDefined()) return true;
    }
    return false;
  };
  if (has("jobs")) return FileKind::kCluster;
  if (has("validation")) return FileKind::kValidationCase;
  if (has("suite")) return FileKind::kValidationSuite;
  if (has("axes")) return FileKind::kSweep;
  if (has("tier")) return FileKind::kNetworkPart;
  if (has("regimes")) return FileKind::kAccuracy;
  if (has("model") || has("parallelism") || has("cluster")) return FileKind::kScenario;
  if (has("fabric") || has("node")) return FileKind::kTopology;
  if (has("gpu") || has("host_link") || has("stack")) return FileKind::kHardware;
  throw_config_error(
      root->location(), "",
      "cannot tell what kind of file this is: a scenario has model/training/parallelism/cluster, "
      "a topology has node/fabric, a hardware profile has gpu/host_link (a stack profile: stack), a cluster "
      "file has jobs, a validation case validation, a validation suite suite, a sweep axes, a network part "
      "tier, an accuracy file regimes");
}

namespace {

Scenario load_scenario_from(const std::filesystem::path& path, const std::string* text,
                            const std::vector<Override>& overrides) {
  Diagnostics diagnostics;
  Scenario scenario;
  const std::optional<Node> root = load_root(path, text, override_layers(overrides, diagnostics), diagnostics,
                                             {}, "", &scenario.content_hash);
  if (root) {
    scenario.path = normalised(path);
    internal::decode_scenario(
        *root, scenario,
        [&](const Node& ref, const Node& set, const std::filesystem::path& file, Topology& out) {
          return load_into(file, nullptr, set_layers<Topology>(set, diagnostics), diagnostics, ref.location(),
                           ref.path(), out);
        },
        [&](const Node& ref, const Node& set, const std::filesystem::path& file, HardwareProfile& out) {
          return load_into(file, nullptr, set_layers<HardwareProfile>(set, diagnostics), diagnostics,
                           ref.location(), ref.path(), out);
        });
  }
  diagnostics.throw_if_any();
  return scenario;
}

}  // namespace

Scenario load_scenario(const std::filesystem::path& path, const std::vector<Override>& overrides) {
  return load_scenario_from(path, nullptr, overrides);
}

Topology load_topology(const std::filesystem::path& path, const std::vector<Override>& overrides) {
  return load_from<Topology>(path, nullptr, overrides, nullptr);
}

HardwareProfile load_hardware(const std::filesystem::path& path, const std::vector<Override>& overrides) {
  return load_from<HardwareProfile>(path, nullptr, overrides, nullptr);
}

Topology load_topology(const std::filesystem::path& path, const Node& set) {
  return load_from<Topology>(path, nullptr, {}, &set);
}

HardwareProfile load_hardware(const std::filesystem::path& path, const Node& set) {
  return load_from<HardwareProfile>(path, nullptr, {}, &set);
}

Scenario load_scenario_text(const std::string& text, const std::filesystem::path& path,
                            const std::vector<Override>& overrides) {
  return load_scenario_from(path, &text, overrides);
}

Topology load_topology_text(const std::string& text, const std::filesystem::path& path,
                            const std::vector<Override>& overrides) {
  return load_from<Topology>(path, &text, overrides, nullptr);
}

HardwareProfile load_hardware_text(const std::string& text, const std::filesystem::path& path,
                                   const std::vector<Override>& overrides) {
  return load_from<HardwareProfile>(path, &text, overrides, nullptr);
}

}  // namespace trainsim::config
