// load_scenario_with (settings.h).
//
// The settings reach the scenario loader as a small scenario file that `extends` the base and holds
// them as nested keys, which the loader treats exactly like --set layers (keys here win, maps merge,
// lists replace); the problems the loader finds in that file are then moved to the settings that
// caused them, in the file that wrote them.
#include "sim/config/settings.h"

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <stdlib.h>
#include <unistd.h>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/config/loader.h"

namespace trainsim::config {
namespace {

// Keys whose values are paths (resolved against the file that writes them).
bool is_path_key(const std::string& key) { return key == "cluster.topology" || key == "cluster.hardware"; }

// The settings as a tree of nested keys.
struct Branch {
  std::map<std::string, Branch> children;
  const Setting* leaf = nullptr;
};

void emit(YAML::Emitter& out, const Branch& branch, const std::filesystem::path& dir) {
  out << YAML::BeginMap;
  for (const auto& [key, child] : branch.children) {
    out << YAML::Key << key << YAML::Value;
    if (child.leaf == nullptr) {
      emit(out, child, dir);
      continue;
    }
    const YAML::Node value = YAML::Load(child.leaf->value);
    if (is_path_key(child.leaf->key) && value.IsScalar() &&
        std::filesystem::path(value.Scalar()).is_relative()) {
      out << (dir / value.Scalar()).lexically_normal().string();
    } else {
      out << value;
    }
  }
  out << YAML::EndMap;
}

// A file that removes itself.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& content) {
    std::string name = (std::filesystem::temp_directory_path() / "trainsim-settings-XXXXXX.yaml").string();
    const int fd = ::mkstemps(name.data(), 5);
    if (fd < 0) throw std::runtime_error(fmt::format("cannot create {}: {}", name, std::strerror(errno)));
    path_ = name;
    size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd);
        throw std::runtime_error(fmt::format("cannot write {}: {}", name, std::strerror(errno)));
      }
      done += static_cast<size_t>(n);
    }
    ::close(fd);
  }
  ~TemporaryFile() { ::unlink(path_.c_str()); }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The setting at the scenario key `path`, inside it, or below it; null when none is.
const Setting* setting_at(const std::string& path, const std::vector<Setting>& settings) {
  for (const Setting& s : settings) {
    if (s.key == path) return &s;
  }
  for (const Setting& s : settings) {
    if (s.key.rfind(path + ".", 0) == 0 || path.rfind(s.key + ".", 0) == 0) return &s;
  }
  return nullptr;
}

// The setting a diagnostic about `path` concerns: the one at that key, inside it, or below it; for a
// key of the topology or hardware profile, the what-if setting that wrote it; else the first.
const Setting* setting_for(const std::string& path, const std::vector<Setting>& settings) {
  for (const std::string& key : {path, "cluster.topology_set." + path, "cluster.hardware_set." + path}) {
    if (const Setting* s = setting_at(key, settings)) return s;
  }
  return settings.empty() ? nullptr : &settings.front();
}

// Locates the what-ifs that `file` wrote at the settings they came from (`prefix` + their key).
void relocate(std::vector<WhatIf>& what_if, const std::string& prefix, const std::filesystem::path& file,
              const std::vector<Setting>& settings, const std::string& referrer) {
  for (WhatIf& w : what_if) {
    if (std::filesystem::path(w.where.file).filename() != file.filename()) continue;
    const Setting* s = setting_at(prefix + w.key, settings);
    w.where = s != nullptr ? s->location : Location{referrer};
  }
}

}  // namespace

Scenario load_scenario_with(const std::filesystem::path& base, const std::vector<Setting>& settings,
                            const std::filesystem::path& dir, const std::string& referrer) {
  Diagnostics diagnostics;
  Branch root;
  for (const Setting& s : settings) {
    Branch* at = &root;
    size_t start = 0;
    bool clash = false;
    for (size_t dot = 0; dot != std::string::npos; start = dot + 1) {
      dot = s.key.find('.', start);
      const std::string part =
          s.key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      at = &at->children[part];
      if (at->leaf != nullptr) clash = true;
    }
    try {
      YAML::Load(s.value);
    } catch (const YAML::Exception& e) {
      diagnostics.error(s.location, s.key, fmt::format("invalid value: {}", e.msg));
      continue;
    }
    if (clash || !at->children.empty()) {
      diagnostics.error(s.location, s.key, "this key is also set as a whole above or below; set it once");
      continue;
    }
    at->leaf = &s;
  }
  diagnostics.throw_if_any();
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "schema_version" << YAML::Value << 1 << YAML::Key << "extends"
      << YAML::Value << base.string() << YAML::EndMap;
  std::string text = std::string(out.c_str()) + "\n";
  if (!root.children.empty()) {
    YAML::Emitter body;
    emit(body, root, dir);
    text += std::string(body.c_str()) + "\n";
  }
  const TemporaryFile file(text);
  try {
    Scenario scenario = load_scenario(file.path());
    relocate(scenario.cluster.topology.what_if, "cluster.topology_set.", file.path(), settings, referrer);
    relocate(scenario.cluster.hardware.what_if, "cluster.hardware_set.", file.path(), settings, referrer);
    return scenario;
  } catch (const ConfigError& e) {
    std::vector<Diagnostic> located = e.diagnostics();
    for (Diagnostic& d : located) {
      if (std::filesystem::path(d.location.file).filename() != file.path().filename()) continue;
      const Setting* s = setting_for(d.path, settings);
      d.location = s != nullptr ? s->location : Location{referrer};
    }
    throw ConfigError(std::move(located));
  }
}

}  // namespace trainsim::config
