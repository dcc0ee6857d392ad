// Event: owner of a cudaEvent_t (move-only). Orders work across streams without host blocking, and
// times it.
#ifndef TRAINSIM_KERNELS_CUDA_EVENT_H_
#define TRAINSIM_KERNELS_CUDA_EVENT_H_

#include <cuda_runtime_api.h>

namespace trainsim::kernels {

class Event {
 public:
  enum class Timing { kDisabled, kEnabled };

  // Creates an event on the current device; only kEnabled events can be timed. Throws GpuError.
  explicit Event(Timing timing = Timing::kDisabled);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;

  cudaEvent_t get() const { return event_; }
  // Captures the work enqueued on `stream` so far.
  void record(cudaStream_t stream);

 private:
  cudaEvent_t event_ = nullptr;
};

// Milliseconds between two recorded, completed, timing-enabled events. Throws GpuError otherwise.
float elapsed_ms(const Event& start, const Event& end);

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_CUDA_EVENT_H_
