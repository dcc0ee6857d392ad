#include "sim/common/hash.h"

#include <fmt/format.h>

namespace trainsim {

namespace {
constexpr std::string_view kPrefix = "fnv1a64:";
}

uint64_t fnv1a64(std::string_view bytes, uint64_t seed) {
  uint64_t hash = seed;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string fnv1a64_hex(std::string_view bytes, const std::string& previous) {
  uint64_t seed = 0xcbf29ce484222325ULL;
  if (previous.size() > kPrefix.size()) seed = std::stoull(previous.substr(kPrefix.size()), nullptr, 16);
  return fmt::format("{}{:016x}", kPrefix, fnv1a64(bytes, seed));
}

}  // namespace trainsim
