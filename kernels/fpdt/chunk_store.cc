#include "kernels/fpdt/chunk_store.h"

namespace trainsim::kernels {

namespace {

// Chunks start 256-byte aligned, as separate allocations would.
constexpr size_t kAlignment = 256;

}  // namespace

ChunkStore::ChunkStore(const std::vector<int64_t>& chunk_elements, size_t element_bytes,
                       MemoryLocation location)
    : location_(location) {
  offsets_.push_back(0);
  for (const int64_t elements : chunk_elements) {
    const size_t bytes = static_cast<size_t>(elements) * element_bytes;
    sizes_.push_back(bytes);
    offsets_.push_back(offsets_.back() + (bytes + kAlignment - 1) / kAlignment * kAlignment);
  }
  if (location == MemoryLocation::kPinnedHost) {
    host_ = PinnedBuffer<std::byte>(total_bytes());
  } else {
    device_ = DeviceBuffer<std::byte>(total_bytes());
  }
}

std::byte* ChunkStore::chunk(int64_t i) {
  std::byte* base = location_ == MemoryLocation::kPinnedHost ? host_.data() : device_.data();
  return base + offsets_[i];
}

}  // namespace trainsim::kernels
