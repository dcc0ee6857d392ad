// A fake CUDA runtime for CPU tests of host code that drives streams (the FPDT pipeline). Linked in
// place of libcudart, it implements the runtime calls that code makes on host memory. Work enqueued
// on a stream is deferred; whenever the host waits (stream or event synchronize, a blocking copy),
// the pending work runs one operation at a time, from a stream whose next operation is ready
// (stream order and event waits are the only constraints) chosen as reset() says. A missing event
// wait therefore shows up as stale or poisoned data. Allocations are poisoned with
// 0xFF bytes (NaN in every float type). fake_kernels.cc supplies the attention launchers, computed
// with the CPU references on the same deferred streams.
#ifndef TRAINSIM_TESTS_KERNELS_FAKE_CUDA_FAKE_RUNTIME_H_
#define TRAINSIM_TESTS_KERNELS_FAKE_CUDA_FAKE_RUNTIME_H_

#include <cstdint>
#include <functional>

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

}  // namespace trainsim::kernels::fake_cuda

#endif  // TRAINSIM_TESTS_KERNELS_FAKE_CUDA_FAKE_RUNTIME_H_
