#include "sim/config/what_if.h"

#include <algorithm>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/config/decode.h"

namespace trainsim::config {
namespace {

// Whether `key` is `prefix` or lies below it in the dotted (or indexed) hierarchy.
bool within(std::string_view key, std::string_view prefix) {
  return key.substr(0, prefix.size()) == prefix &&
         (key.size() == prefix.size() || key[prefix.size()] == '.' || key[prefix.size()] == '[');
}

// The leaves of one layer's map (lists and scalars; lists replace, so they are not walked). The first
// layer to set a key wins, as in the decoders: a key that an earlier layer set, or set below or above
// it, is not recorded again.
void collect(const YAML::Node& map, const std::shared_ptr<const Source>& source, const std::string& path,
             std::vector<WhatIf>& out) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key =
        path.empty() ? it->first.Scalar() : fmt::format("{}.{}", path, it->first.Scalar());
    if (it->second.IsMap()) {
      collect(it->second, source, key, out);
      continue;
    }
    if (set_by_what_if(out, key) || what_if_touches(out, key)) continue;
    YAML::Emitter text;
    text << YAML::Flow << it->second;
    const Node located({{it->second, source}}, key, nullptr);
    out.push_back({key, text.c_str(), located.location()});
  }
}

}  // namespace

bool set_by_what_if(const std::vector<WhatIf>& what_if, std::string_view key) {
  return std::ranges::any_of(what_if, [key](const WhatIf& w) { return within(key, w.key); });
}

bool what_if_touches(const std::vector<WhatIf>& what_if, std::string_view prefix) {
  return std::ranges::any_of(what_if, [prefix](const WhatIf& w) { return within(w.key, prefix); });
}

namespace internal {

std::vector<Layer> what_if_layers(const Node& set, std::string_view file_kind, std::string_view example) {
  if (!set.defined()) return {};
  if (!set.is_map()) {
    set.error(fmt::format("expected a map of {} keys to set over the file, e.g. {}", file_kind, example));
    return {};
  }
  bool ok = true;
  for (const Layer& layer : set.layers()) {
    if (!layer.node.IsMap()) continue;
    for (auto it = layer.node.begin(); it != layer.node.end(); ++it) {
      const std::string key = it->first.Scalar();
      const Node at({{it->second, layer.source}}, set.child_path(key), set.diagnostics());
      if (key == "schema_version" || key == "extends") {
        at.error(fmt::format("{} belongs to the {} file itself; set values of it here, or name another file",
                             key, file_kind));
        ok = false;
      } else if (key.find('.') != std::string::npos) {
        at.error(
            fmt::format("write nested keys here, e.g. {}: {{{}: ...}}; dotted keys are the "
                        "spelling of --set and sweep axes",
                        key.substr(0, key.find('.')), key.substr(key.find('.') + 1)));
        ok = false;
      }
    }
  }
  if (!ok) return {};
  std::vector<Layer> layers;
  for (const Layer& layer : set.layers()) {
    if (layer.node.IsMap()) layers.push_back(layer);
  }
  return layers;
}

std::vector<WhatIf> collect_what_ifs(const std::vector<Layer>& layers) {
  std::vector<WhatIf> out;
  for (const Layer& layer : layers) {
    if (layer.node.IsMap()) collect(layer.node, layer.source, "", out);
  }
  return out;
}

}  // namespace internal
}  // namespace trainsim::config
