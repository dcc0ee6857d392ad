#include "tests/kernels/fake_cuda/fake_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include <cublasLt.h>
#include <nccl.h>

namespace trainsim::kernels::fake_cuda {

namespace {

struct FakeEvent {
  uint64_t recorded = 0;
  uint64_t completed = 0;
};

struct Operation {
  std::function<void()> work;  // empty for an event wait
  FakeEvent* wait_event = nullptr;
  uint64_t wait_version = 0;

  bool ready() const { return wait_event == nullptr || wait_event->completed >= wait_version; }
};

struct FakeStream {
  std::deque<Operation> queue;
  uint64_t index = 0;  // creation order
};

struct State {
  FakeStream default_stream;
  std::vector<FakeStream*> streams{&default_stream};  // creation order: deterministic schedules
  std::mt19937 rng{1};
  uint32_t seed = 1;
  uint64_t operations = 0;
  uint64_t streams_created = 0;
  std::vector<Issued> issued;
  std::map<const char*, size_t> pinned;  // start -> bytes of each cudaMallocHost allocation
};

State& state() {
  static State s;
  return s;
}

FakeStream* stream_of(cudaStream_t stream) {
  return stream == nullptr ? &state().default_stream : reinterpret_cast<FakeStream*>(stream);
}

// Runs pending operations, in a random order that respects the streams and the event waits,
// until `done()`; throws when no operation can run before that.
template <typename Done>
void run_until(Done done) {
  State& s = state();
  std::vector<FakeStream*> ready;
  while (!done()) {
    ready.clear();
    for (FakeStream* stream : s.streams) {
      if (!stream->queue.empty() && stream->queue.front().ready()) {
        ready.push_back(stream);
      }
    }
    if (ready.empty()) {
      throw std::logic_error(
          "fake CUDA: the host waits for work that can never run (an event never recorded?)");
    }
    // Odd seeds: a random ready stream each time. Even seeds: the ready stream of highest priority,
    // the priorities of streams created in threes (the pipeline's compute, offload, general) being
    // permutation (seed / 2) % 6 of the three, so one stream runs as far ahead as its waits allow.
    FakeStream* chosen = ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(s.rng)];
    if (s.seed % 2 == 0) {
      static constexpr int kPermutations[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                                  {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
      const int* permutation = kPermutations[(s.seed / 2) % 6];
      auto priority = [&](const FakeStream* stream) {
        return stream->index == 0 ? -1 : permutation[(stream->index - 1) % 3];
      };
      chosen = *std::max_element(ready.begin(), ready.end(), [&](const FakeStream* a, const FakeStream* b) {
        return priority(a) < priority(b);
      });
    }
    const Operation operation = std::move(chosen->queue.front());
    chosen->queue.pop_front();
    if (operation.work) {
      operation.work();
    }
    ++s.operations;
  }
}

void drain() {
  run_until([] {
    for (FakeStream* stream : state().streams) {
      if (!stream->queue.empty()) {
        return false;
      }
    }
    return true;
  });
}

bool pinned(const void* pointer) {
  const auto* p = static_cast<const char*>(pointer);
  const std::map<const char*, size_t>& ranges = state().pinned;
  auto after = ranges.upper_bound(p);
  if (after == ranges.begin()) return false;
  --after;
  return p < after->first + after->second;
}

// Logs a copy that crosses between pinned host memory and the device.
void issue_copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  const bool to_host = pinned(dst), from_host = pinned(src);
  if (to_host == from_host) return;
  state().issued.push_back({to_host ? Issued::Kind::kCopyToHost : Issued::Kind::kCopyToDevice,
                            stream_of(stream)->index, static_cast<int64_t>(bytes)});
}

void* poisoned_allocation(size_t bytes) {
  const size_t rounded = (bytes + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, rounded == 0 ? 256 : rounded);
  std::memset(p, 0xFF, rounded == 0 ? 256 : rounded);
  return p;
}

}  // namespace

void reset(uint32_t seed) {
  drain();
  state().rng.seed(seed);
  state().seed = seed;
  state().operations = 0;
  state().issued.clear();
}

void enqueue(cudaStream_t stream, std::function<void()> work) {
  stream_of(stream)->queue.push_back({std::move(work), nullptr, 0});
}

uint64_t operations_run() { return state().operations; }

const std::vector<Issued>& issued() { return state().issued; }

void issue_attention(Issued entry, cudaStream_t stream) {
  entry.stream = stream_of(stream)->index;
  state().issued.push_back(entry);
}

uint64_t streams_created() { return state().streams_created; }

}  // namespace trainsim::kernels::fake_cuda

using trainsim::kernels::fake_cuda::enqueue;
namespace fake = trainsim::kernels::fake_cuda;

extern "C" {

cudaError_t cudaMalloc(void** pointer, size_t bytes) {
  *pointer = fake::poisoned_allocation(bytes);
  return cudaSuccess;
}

cudaError_t cudaFree(void* pointer) {
  fake::drain();
  std::free(pointer);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** pointer, size_t bytes) {
  cudaMalloc(pointer, bytes);
  fake::state().pinned[static_cast<const char*>(*pointer)] = bytes;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* pointer) {
  fake::state().pinned.erase(static_cast<const char*>(pointer));
  return cudaFree(pointer);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind /*kind*/) {
  fake::drain();
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind /*kind*/,
                            cudaStream_t stream) {
  fake::issue_copy(dst, src, bytes, stream);
  enqueue(stream, [=] { std::memcpy(dst, src, bytes); });
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                              size_t height, cudaMemcpyKind /*kind*/, cudaStream_t stream) {
  fake::issue_copy(dst, src, width * height, stream);
  enqueue(stream, [=] {
    for (size_t row = 0; row < height; ++row) {
      std::memcpy(static_cast<char*>(dst) + row * dst_pitch, static_cast<const char*>(src) + row * src_pitch,
                  width);
    }
  });
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t stream) {
  enqueue(stream, [=] { std::memset(dst, value, bytes); });
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int /*flags*/) {
  auto* s = new fake::FakeStream;
  s->index = ++fake::state().streams_created;  // the default stream has index 0
  fake::state().streams.push_back(s);
  *stream = reinterpret_cast<cudaStream_t>(s);
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  fake::FakeStream* s = fake::stream_of(stream);
  fake::run_until([s] { return s->queue.empty(); });
  std::erase(fake::state().streams, s);
  delete s;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  fake::FakeStream* s = fake::stream_of(stream);
  fake::run_until([s] { return s->queue.empty(); });
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int /*flags*/) {
  auto* e = reinterpret_cast<fake::FakeEvent*>(event);
  if (e->recorded > 0) {  // waiting for a never-recorded event is a no-op
    fake::stream_of(stream)->queue.push_back({{}, e, e->recorded});
  }
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int /*flags*/) {
  *event = reinterpret_cast<cudaEvent_t>(new fake::FakeEvent);
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  fake::drain();  // pending waits may still point at it
  delete reinterpret_cast<fake::FakeEvent*>(event);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  auto* e = reinterpret_cast<fake::FakeEvent*>(event);
  const uint64_t version = ++e->recorded;
  enqueue(stream, [e, version] { e->completed = std::max(e->completed, version); });
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t /*start*/, cudaEvent_t /*end*/) {
  *ms = 0.0F;
  return cudaSuccess;
}

cudaError_t cudaGetLastError() { return cudaSuccess; }

const char* cudaGetErrorName(cudaError_t /*error*/) { return "cudaErrorFake"; }

const char* cudaGetErrorString(cudaError_t /*error*/) { return "fake CUDA runtime error"; }

const char* cublasLtGetStatusName(cublasStatus_t /*status*/) { return "CUBLAS_STATUS_FAKE"; }

const char* cublasLtGetStatusString(cublasStatus_t /*status*/) { return "fake cuBLASLt error"; }

const char* ncclGetErrorString(ncclResult_t /*result*/) { return "fake NCCL error"; }

const char* ncclGetLastError(ncclComm_t /*comm*/) { return ""; }

}  // extern "C"
