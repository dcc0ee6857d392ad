// libFuzzer entry point of one target of targets.h, chosen at build time by TRAINSIM_FUZZ_TARGET.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const trainsim::fuzz::FuzzTarget* const target =
      trainsim::fuzz::find_fuzz_target(TRAINSIM_FUZZ_TARGET);
  if (target == nullptr) trainsim::fuzz::finding("no fuzz target named " TRAINSIM_FUZZ_TARGET);
  target->run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
