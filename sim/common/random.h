// Portable pseudo-random numbers: the same on every platform and standard library (the standard
// distributions and std::shuffle are implementation-defined), so seeded results are reproducible.
#ifndef TRAINSIM_SIM_COMMON_RANDOM_H_
#define TRAINSIM_SIM_COMMON_RANDOM_H_

#include <cstdint>

namespace trainsim {

// SplitMix64's output function (Steele, Lea, Flood 2014): a fixed bijective mix of 64 bits; iterate
// it (state = splitmix64(state)) for a stream.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform double in (0, 1] from the top 53 bits of `bits`.
inline double unit_interval(uint64_t bits) { return static_cast<double>((bits >> 11) + 1) * 0x1p-53; }

}  // namespace trainsim

#endif  // TRAINSIM_SIM_COMMON_RANDOM_H_
