// ChunkStore: the u chunks of one FPDT tensor, back to back in one allocation, in pinned host memory
// (the offloaded copies DeepSpeed's SequenceChunk keeps) or in device memory (the non-offload
// variant keeps every chunk on the GPU).
#ifndef TRAINSIM_KERNELS_FPDT_CHUNK_STORE_H_
#define TRAINSIM_KERNELS_FPDT_CHUNK_STORE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/pinned_buffer.h"

namespace trainsim::kernels {

enum class MemoryLocation { kPinnedHost, kDevice };

class ChunkStore {
 public:
  ChunkStore() = default;
  // Chunk i holds chunk_elements[i] elements of element_bytes each; the contents are undefined.
  // Throws GpuError when the allocation fails.
  ChunkStore(const std::vector<int64_t>& chunk_elements, size_t element_bytes, MemoryLocation location);

  std::byte* chunk(int64_t i);
  size_t chunk_bytes(int64_t i) const { return sizes_[i]; }
  // The allocation, padding included.
  size_t total_bytes() const { return offsets_.empty() ? 0 : offsets_.back(); }

 private:
  std::vector<size_t> offsets_;  // u + 1 byte offsets
  std::vector<size_t> sizes_;
  MemoryLocation location_ = MemoryLocation::kDevice;
  PinnedBuffer<std::byte> host_;
  DeviceBuffer<std::byte> device_;
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_FPDT_CHUNK_STORE_H_
