#include "sim/config/diagnostics.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace trainsim::config {

std::string Diagnostic::to_string() const {
  std::string out = location.file;
  if (location.line > 0) out += fmt::format(":{}:{}", location.line, location.column);
  out += ": error: ";
  if (!path.empty()) out += path + ": ";
  return out + message;
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics) : diagnostics_(std::move(diagnostics)) {
  std::stable_sort(diagnostics_.begin(), diagnostics_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.location.file, a.location.line, a.location.column) <
           std::tie(b.location.file, b.location.line, b.location.column);
  });
  for (const Diagnostic& d : diagnostics_) {
    if (!what_.empty()) what_ += '\n';
    what_ += d.to_string();
  }
}

void Diagnostics::error(Location location, std::string path, std::string message) {
  entries_.push_back({std::move(location), std::move(path), std::move(message)});
}

void Diagnostics::throw_if_any() const {
  if (!entries_.empty()) throw ConfigError(entries_);
}

void throw_config_error(Location location, std::string path, std::string message) {
  Diagnostic diagnostic;
  diagnostic.location = std::move(location);
  diagnostic.path = std::move(path);
  diagnostic.message = std::move(message);
  throw ConfigError(std::vector<Diagnostic>(1, std::move(diagnostic)));
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    const size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string match = closest_match(word, candidates);
  return match.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", match);
}

}  // namespace trainsim::config
