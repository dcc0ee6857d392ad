// Content hashes for provenance: stable across runs and machines (FNV-1a, 64 bit).
#ifndef TRAINSIM_SIM_COMMON_HASH_H_
#define TRAINSIM_SIM_COMMON_HASH_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace trainsim {

// FNV-1a 64-bit hash of `bytes`, continuing from `seed`.
uint64_t fnv1a64(std::string_view bytes, uint64_t seed = 0xcbf29ce484222325ULL);

// "fnv1a64:" followed by 16 hex digits. `previous`, when non-empty, is a hash from this function
// that the new bytes extend (to hash a chain of files as one).
std::string fnv1a64_hex(std::string_view bytes, const std::string& previous = "");

}  // namespace trainsim

#endif  // TRAINSIM_SIM_COMMON_HASH_H_
