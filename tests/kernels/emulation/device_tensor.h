// Host arrays standing in for device tensors in emulated kernel runs: guard zones on both sides
// catch out-of-bounds writes, and the array is registered as readable global memory.
#ifndef TRAINSIM_TESTS_KERNELS_EMULATION_DEVICE_TENSOR_H_
#define TRAINSIM_TESTS_KERNELS_EMULATION_DEVICE_TENSOR_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/kernels/emulation/emulator.h"

namespace trainsim::kernels::emulation {

template <typename T>
class GuardedTensor {
 public:
  // `count` elements, every byte (the guards too) set to `fill_byte`; 0xFF is NaN in every float type.
  explicit GuardedTensor(int64_t count, int fill_byte = 0xFF) : count_(count) {
    storage_.resize(static_cast<size_t>(count + 2 * kGuard));
    std::memset(static_cast<void*>(storage_.data()), fill_byte, storage_.size() * sizeof(T));
    std::memset(guard_pattern_, fill_byte, sizeof(guard_pattern_));
    register_global(data(), static_cast<size_t>(count) * sizeof(T));
  }

  T* data() { return storage_.data() + kGuard; }
  const T* data() const { return storage_.data() + kGuard; }
  int64_t size() const { return count_; }
  T& operator[](int64_t i) { return data()[i]; }
  const T& operator[](int64_t i) const { return data()[i]; }

  // True when no byte of either guard zone changed.
  bool guards_intact() const {
    const auto* bytes = reinterpret_cast<const unsigned char*>(storage_.data());
    const size_t guard_bytes = kGuard * sizeof(T);
    const size_t tail = (kGuard + count_) * sizeof(T);
    for (size_t i = 0; i < guard_bytes; ++i) {
      if (bytes[i] != guard_pattern_[0] || bytes[tail + i] != guard_pattern_[0]) {
        return false;
      }
    }
    return true;
  }

 private:
  static constexpr int64_t kGuard = 64;  // elements; keeps data() 16-byte aligned
  int64_t count_;
  std::vector<T> storage_;
  unsigned char guard_pattern_[1];
};

}  // namespace trainsim::kernels::emulation

#endif  // TRAINSIM_TESTS_KERNELS_EMULATION_DEVICE_TENSOR_H_
