// The fuzz targets: one function per decoder of untrusted text (scenario, topology and hardware
// profile YAML, quantities with units, nccl-tests logs, sweep files and their expansion, cluster
// files, PyTorch profiler traces). A target returns normally on every input the code under test handles as
// documented: a typed value, or a located config::ConfigError (or another exception the decoder documents).
// Anything else is a finding: an undocumented exception escapes, a sanitizer reports, or a documented round
// trip breaks (the target then calls finding()). Shared by the libFuzzer executables (fuzzer_main.cc) and by
// the replay of tests/fuzz/regressions/ in the default build (regression_test.cc).
#ifndef TRAINSIM_TESTS_FUZZ_TARGETS_H_
#define TRAINSIM_TESTS_FUZZ_TARGETS_H_

#include <string>
#include <string_view>
#include <vector>

namespace trainsim::fuzz {

struct FuzzTarget {
  const char* name;  // also the folder of its seeds and regressions
  void (*run)(std::string_view input);
};

// Every target, in a fixed order.
const std::vector<FuzzTarget>& fuzz_targets();

// The target called `name`; nullptr when there is none.
const FuzzTarget* find_fuzz_target(std::string_view name);

// Reports a broken property of the code under test on stderr and aborts (libFuzzer then saves the
// input; the regression replay fails).
[[noreturn]] void finding(const std::string& what);

}  // namespace trainsim::fuzz

#endif  // TRAINSIM_TESTS_FUZZ_TARGETS_H_
