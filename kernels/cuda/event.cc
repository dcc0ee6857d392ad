#include "kernels/cuda/event.h"

#include <utility>

#include "kernels/cuda/check.h"

namespace trainsim::kernels {

Event::Event(Timing timing) {
  CUDA_CHECK(cudaEventCreateWithFlags(
      &event_, timing == Timing::kEnabled ? cudaEventDefault : cudaEventDisableTiming));
}

Event::~Event() {
  if (event_ != nullptr) {
    cudaEventDestroy(event_);  // a destructor cannot report
  }
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) {
      cudaEventDestroy(event_);
    }
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::record(cudaStream_t stream) { CUDA_CHECK(cudaEventRecord(event_, stream)); }

float elapsed_ms(const Event& start, const Event& end) {
  float ms = 0.0F;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), end.get()));
  return ms;
}

}  // namespace trainsim::kernels
