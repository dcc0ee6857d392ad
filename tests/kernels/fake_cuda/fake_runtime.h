// A fake CUDA runtime for CPU tests of host code that drives streams (the FPDT pipeline). Linked in
// place of libcudart, it implements the runtime calls that code makes on host memory. Work enqueued
// on a stream is deferred; whenever the host waits (stream or event synchronize, a blocking copy),
// the pending work runs one operation at a time, from a stream whose next operation is ready
// (stream order and event waits are the only constraints) chosen as reset() says. A missing event
// wait therefore shows up as stale or poisoned data. Allocations are poisoned with
// 0xFF bytes (NaN in every float type). What the host issues is also logged (issued()), for tests
// of the order and sizes of copies and kernels. fake_kernels.cc supplies the attention launchers, computed
// with the CPU references on the same deferred streams.
#ifndef TRAINSIM_TESTS_KERNELS_FAKE_CUDA_FAKE_RUNTIME_H_
#define TRAINSIM_TESTS_KERNELS_FAKE_CUDA_FAKE_RUNTIME_H_

#include <cstdint>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

namespace trainsim::kernels::fake_cuda {

// Runs every pending operation, then reseeds the scheduler. Odd seeds: a random ready stream runs
// next, operation by operation. Even seeds: fixed stream priorities, order (seed / 2) % 6 of each
// three streams created in a row (the pipeline's), so one stream runs as far ahead as its waits allow.
void reset(uint32_t seed);
// Enqueues `work` on `stream` (what a kernel launch does).
void enqueue(cudaStream_t stream, std::function<void()> work);
// Operations run since the last reset.
uint64_t operations_run();

// What the host issued since the last reset, in issue order: copies between pinned host memory and
// the device (cudaMemcpyAsync and cudaMemcpy2DAsync; device-to-device copies are not listed) and
// attention kernels. `stream` is the stream's creation number (0: the default stream; see
// streams_created()).
struct Issued {
  enum class Kind { kCopyToHost, kCopyToDevice, kAttentionForward, kAttentionBackward };
  Kind kind;
  uint64_t stream;
  int64_t bytes = 0;  // copies
  // Attention kernels.
  int64_t batch = 0, heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head_dim = 0;
  bool causal = false;
  bool operator==(const Issued&) const = default;
};
const std::vector<Issued>& issued();
// Records an attention kernel issued on `stream` (the fake launchers call it).
void issue_attention(Issued entry, cudaStream_t stream);
// Streams created so far (the next one created gets this number + 1).
uint64_t streams_created();

}  // namespace trainsim::kernels::fake_cuda

#endif  // TRAINSIM_TESTS_KERNELS_FAKE_CUDA_FAKE_RUNTIME_H_
