#include "calibrate/cpu/shared_memory_collectives.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace trainsim::calibrate::cpu {

using config::CollectiveKind;

SharedMemoryCollectives::SharedMemoryCollectives(ThreadGroup& group, double max_bytes, int sets)
    : group_(group) {
  if (sets < 1) throw std::invalid_argument("SharedMemoryCollectives needs at least one buffer set");
  const size_t count = static_cast<size_t>(max_bytes / sizeof(float));
  buffers_.resize(static_cast<size_t>(sets * group.size()));
  for (size_t i = 0; i < buffers_.size(); ++i) {
    buffers_[i].send.assign(count, 1.0F + static_cast<float>(i % 7));
    buffers_[i].recv.assign(count, 0.0F);
  }
}

void SharedMemoryCollectives::run(int rank, CollectiveKind kind, double bytes, int set) {
  const int n = group_.size();
  const size_t count = static_cast<size_t>(bytes / sizeof(float));
  RankBuffers& mine = buffers(set, rank);
  if (count > mine.send.size()) throw std::invalid_argument("collective larger than the buffers allocated");
  const size_t block =
      count / static_cast<size_t>(n);  // per-rank share (all-gather, reduce-scatter, all-to-all)
  const size_t r = static_cast<size_t>(rank);
  switch (kind) {
    case CollectiveKind::kAllReduce: {
      // Reduce-scatter of the rank's slice, then all-gather of every slice.
      const size_t begin = count * r / static_cast<size_t>(n);
      const size_t end = count * (r + 1) / static_cast<size_t>(n);
      std::copy(mine.send.begin() + begin, mine.send.begin() + end, mine.recv.begin() + begin);
      for (int peer = 0; peer < n; ++peer) {
        if (peer == rank) continue;
        const float* src = buffers(set, peer).send.data();
        for (size_t i = begin; i < end; ++i) mine.recv[i] += src[i];
      }
      group_.barrier();
      for (int peer = 0; peer < n; ++peer) {
        if (peer == rank) continue;
        const size_t b = count * static_cast<size_t>(peer) / static_cast<size_t>(n);
        const size_t e = count * static_cast<size_t>(peer + 1) / static_cast<size_t>(n);
        std::memcpy(mine.recv.data() + b, buffers(set, peer).recv.data() + b, (e - b) * sizeof(float));
      }
      break;
    }
    case CollectiveKind::kAllGather:
      for (int peer = 0; peer < n; ++peer) {
        std::memcpy(mine.recv.data() + block * static_cast<size_t>(peer), buffers(set, peer).send.data(),
                    block * sizeof(float));
      }
      break;
    case CollectiveKind::kReduceScatter:
      std::copy(mine.send.begin() + static_cast<std::ptrdiff_t>(block * r),
                mine.send.begin() + static_cast<std::ptrdiff_t>(block * (r + 1)), mine.recv.begin());
      for (int peer = 0; peer < n; ++peer) {
        if (peer == rank) continue;
        const float* src = buffers(set, peer).send.data() + block * r;
        for (size_t i = 0; i < block; ++i) mine.recv[i] += src[i];
      }
      break;
    case CollectiveKind::kAllToAll:
      for (int peer = 0; peer < n; ++peer) {
        std::memcpy(mine.recv.data() + block * static_cast<size_t>(peer),
                    buffers(set, peer).send.data() + block * r, block * sizeof(float));
      }
      break;
    case CollectiveKind::kSendRecv:
      std::memcpy(mine.recv.data(), buffers(set, (rank + n - 1) % n).send.data(), count * sizeof(float));
      break;
    case CollectiveKind::kBarrier:
      break;
    default:
      throw std::invalid_argument("the CPU backend does not implement this collective");
  }
  group_.barrier();
}

}  // namespace trainsim::calibrate::cpu
