// Warnings a run collects for its report ("extrapolating beyond the measured range", "no
// efficiency in the profile, assuming peak", ...). Deduplicated by key, kept in first-seen order so
// outputs are deterministic. Not thread-safe: one log per simulation.
#ifndef TRAINSIM_SIM_COMMON_WARNINGS_H_
#define TRAINSIM_SIM_COMMON_WARNINGS_H_

#include <map>
#include <string>
#include <vector>

namespace trainsim {

class WarningLog {
 public:
  // Records `message` under `key` unless that key was recorded before; counts repeats.
  void add(const std::string& key, std::string message);
  // The messages in first-seen order, each with " (N times)" appended when repeated.
  std::vector<std::string> messages() const;
  size_t size() const { return order_.size(); }

 private:
  struct Entry {
    std::string message;
    long count = 0;
  };
  std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
};

}  // namespace trainsim

#endif  // TRAINSIM_SIM_COMMON_WARNINGS_H_
