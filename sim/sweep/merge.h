// Combining the output directories of a sweep's shards into one: every directory must come from
// the same sweep (same hash in sweep.json), mode and network, and together they must hold every
// point exactly once. The result is the directory an unsharded run would have written.
#ifndef TRAINSIM_SIM_SWEEP_MERGE_H_
#define TRAINSIM_SIM_SWEEP_MERGE_H_

#include <cstddef>
#include <filesystem>
#include <vector>

namespace trainsim::sweep {

struct MergeSummary {
  size_t directories = 0;
  size_t points = 0;
};

// Merges `dirs` into `out` (created; must not hold results already). Throws SweepError saying which
// directory differs, which points are missing (and which shard should have them) or which are
// duplicated (and where).
MergeSummary merge_sweeps(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out);

}  // namespace trainsim::sweep

#endif  // TRAINSIM_SIM_SWEEP_MERGE_H_
