// Collectives between the ranks of a ThreadGroup through shared memory: the CPU backend's
// "intra-node" tier. They move and reduce real bytes (float sums) with the nccl-tests size
// conventions, so their timings are measurements of this machine's memory system, not a model.
#ifndef TRAINSIM_CALIBRATE_CPU_SHARED_MEMORY_COLLECTIVES_H_
#define TRAINSIM_CALIBRATE_CPU_SHARED_MEMORY_COLLECTIVES_H_

#include <span>
#include <vector>

#include "calibrate/cpu/thread_group.h"
#include "sim/config/types.h"

namespace trainsim::calibrate::cpu {

class SharedMemoryCollectives {
 public:
  // Buffers for collectives of nccl-tests size up to `max_bytes` over every rank of `group`
  // (which must outlive this object), `sets` copies of them to rotate through.
  SharedMemoryCollectives(ThreadGroup& group, double max_bytes, int sets);

  // One collective of nccl-tests size `bytes` (<= max_bytes), on buffer set `set`, executed by
  // rank `rank`: every rank of the group must call it with the same arguments from inside
  // ThreadGroup::run. Ends with a barrier, so it is complete on every rank when it returns.
  // Reductions are float sums; counts round down as nccl-tests' do (count / ranks · ranks).
  void run(int rank, config::CollectiveKind kind, double bytes, int set);

  // The receive buffer of `rank` in buffer set `set`: what the last collective delivered there.
  // Send buffers start as 1 + (set · ranks + rank) % 7 in every element.
  std::span<const float> received(int rank, int set) const {
    return buffers_[static_cast<size_t>(set * group_.size() + rank)].recv;
  }

 private:
  struct RankBuffers {
    std::vector<float> send;
    std::vector<float> recv;
  };
  RankBuffers& buffers(int set, int rank) {
    return buffers_[static_cast<size_t>(set * group_.size() + rank)];
  }

  ThreadGroup& group_;
  std::vector<RankBuffers> buffers_;  // [set][rank]
};

}  // namespace trainsim::calibrate::cpu

#endif  // TRAINSIM_CALIBRATE_CPU_SHARED_MEMORY_COLLECTIVES_H_
