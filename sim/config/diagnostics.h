// Located errors in user input. A decoder records every problem it finds in a Diagnostics
// collector and keeps going; at the end the collector throws one ConfigError carrying all of them,
// each rendered as `file:line:col: error: dotted.path: message` (1-based line and column).
#ifndef TRAINSIM_SIM_CONFIG_DIAGNOSTICS_H_
#define TRAINSIM_SIM_CONFIG_DIAGNOSTICS_H_

#include <exception>
#include <string>
#include <vector>

namespace trainsim::config {

// Where a value came from: a file (or a `--set` argument) and a 1-based position; line 0 when the
// position is unknown.
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
};

struct Diagnostic {
  Location location;
  std::string path;  // dotted key path, empty for whole-file problems
  std::string message;

  // "file:line:col: error: path: message" (the position and path are left out when unknown).
  std::string to_string() const;
};

// Thrown by every loader when the input is invalid. Carries every diagnostic, sorted by file, line
// and column; what() is all of them, one per line.
class ConfigError : public std::exception {
 public:
  explicit ConfigError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::vector<Diagnostic> diagnostics_;
  std::string what_;
};

// Collects diagnostics while a decoder runs. Not thread-safe.
class Diagnostics {
 public:
  void error(Location location, std::string path, std::string message);
  size_t count() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // Throws ConfigError with everything collected so far, if anything was.
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> entries_;
};

// Throws a ConfigError carrying the single diagnostic given.
[[noreturn]] void throw_config_error(Location location, std::string path, std::string message);

// The closest of `candidates` to `word` (edit distance at most 2, or a third of its length),
// empty when none is close. Used for "did you mean" hints.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// ` (did you mean "X"?)` when `word` has a close match among `candidates`, empty otherwise.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_DIAGNOSTICS_H_
