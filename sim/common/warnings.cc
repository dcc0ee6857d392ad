#include "sim/common/warnings.h"

#include <fmt/format.h>

namespace trainsim {

void WarningLog::add(const std::string& key, std::string message) {
  auto [it, inserted] = entries_.try_emplace(key);
  if (inserted) {
    it->second.message = std::move(message);
    order_.push_back(key);
  }
  ++it->second.count;
}

std::vector<std::string> WarningLog::messages() const {
  std::vector<std::string> out;
  out.reserve(order_.size());
  for (const std::string& key : order_) {
    const Entry& e = entries_.at(key);
    out.push_back(e.count > 1 ? fmt::format("{} ({} times)", e.message, e.count) : e.message);
  }
  return out;
}

}  // namespace trainsim
