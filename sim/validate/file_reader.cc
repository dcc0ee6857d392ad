#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/validate/decode_internal.h"

namespace trainsim::validate::internal {
namespace {

using config::Diagnostics;
using config::Layer;
using config::Location;
using config::MapReader;
using config::Node;
using config::Source;

constexpr int kSchemaVersion = 1;

bool load_layers(const std::filesystem::path& path, const Location& referrer, Reader& reader,
                 std::vector<std::filesystem::path>& chain, std::vector<Layer>& out);

// Reads one file of an `extends` chain (and, through load_layers, the rest of the chain).
bool read_chain(const std::filesystem::path& file, const Location& referrer, Reader& reader,
                std::vector<std::filesystem::path>& chain, std::vector<Layer>& out) {
  Diagnostics& diagnostics = reader.diagnostics;
  if (std::find(chain.begin(), chain.end(), file) != chain.end()) {
    std::string cycle;
    for (const auto& f : chain) cycle += display_name(f) + " -> ";
    diagnostics.error(referrer, "extends", fmt::format("extends cycle: {}{}", cycle, display_name(file)));
    return false;
  }
  std::ifstream in(file, std::ios::binary);
  std::stringstream bytes;
  if (in) bytes << in.rdbuf();
  if (!in) {
    diagnostics.error(referrer.file.empty() ? Location{display_name(file)} : referrer, "",
                      fmt::format("cannot read file \"{}\"", display_name(file)));
    return false;
  }
  auto source = std::make_shared<Source>(Source{display_name(file), file.parent_path(), 0});
  YAML::Node root;
  try {
    root = YAML::Load(bytes.str());
  } catch (const YAML::Exception& e) {
    diagnostics.error({source->name, e.mark.line + 1, e.mark.column + 1}, "",
                      fmt::format("invalid YAML: {}", e.msg));
    return false;
  }
  const Node node({{root, source}}, "", &diagnostics, Location{source->name, 1, 1});
  if (!root.IsMap()) {
    node.error("expected a map of keys at the top level (a validation file starts with schema_version: 1)");
    return false;
  }
  Diagnostics scratch;
  MapReader top(Node({{root, source}}, "", &scratch, node.location()));
  const Node version = top.child("schema_version");
  int64_t value = 0;
  if (!version.defined()) {
    node.error(fmt::format("missing schema_version; every trainsim input starts with schema_version: {}",
                           kSchemaVersion));
    return false;
  }
  if (!config::decode(Node(version.layers(), "schema_version", &diagnostics, version.location()), value)) {
    return false;
  }
  if (value != kSchemaVersion) {
    diagnostics.error(
        version.location(), "schema_version",
        fmt::format("unsupported schema_version {}; this trainsim reads version {}", value, kSchemaVersion));
    return false;
  }
  out.push_back({root, source});
  const Node extends = top.child("extends");
  if (!extends.defined()) return true;
  std::filesystem::path parent;
  if (!config::decode(Node(extends.layers(), "extends", &diagnostics, extends.location()), parent))
    return false;
  chain.push_back(file);
  const bool ok = load_layers(parent, extends.location(), reader, chain, out);
  chain.pop_back();
  return ok;
}

// Reads `path` and the chain of files it extends into layers, highest priority first. Errors are
// recorded once per file: a shared base that is broken is reported once, not by every case that
// extends it (a file that cannot be read is reported at `referrer` when it is set).
bool load_layers(const std::filesystem::path& path, const Location& referrer, Reader& reader,
                 std::vector<std::filesystem::path>& chain, std::vector<Layer>& out) {
  const std::filesystem::path file = std::filesystem::absolute(path).lexically_normal();
  if (reader.failed.count(file) != 0) return false;
  const bool ok = read_chain(file, referrer, reader, chain, out);
  if (!ok) reader.failed.insert(file);
  return ok;
}

}  // namespace

bool load_file(const std::filesystem::path& path, Reader& reader, std::vector<config::Layer>& out) {
  std::vector<std::filesystem::path> chain;
  return load_layers(path, {}, reader, chain, out);
}

}  // namespace trainsim::validate::internal
