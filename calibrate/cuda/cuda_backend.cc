#include "calibrate/cuda/cuda_backend.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "calibrate/cpu/cpu_facts.h"
#include "calibrate/cpu/host_timer.h"
#include "calibrate/cuda/cuda_facts.h"
#include "calibrate/cuda/event_timer.h"
#include "calibrate/cuda/fill.h"
#include "calibrate/cuda/idle_kernel.h"
#include "calibrate/cuda/power_meter.h"
#include "kernels/attention/attention_launch.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"
#include "kernels/device_query.h"
#include "kernels/fpdt/pipeline.h"
#include "kernels/fpdt/sequence_io.h"

namespace trainsim::calibrate::cuda {
namespace {

using config::Dtype;
using kernels::DataType;
using kernels::DeviceBuffer;

constexpr double kBudgetBytes = 2.0 * 1024 * 1024 * 1024;  // rotating buffers, per case
constexpr double kMaxCaseFlops = 5e13;                     // ~0.1-0.3 s per run on an H100/H200

DataType data_type(Dtype dtype) {
  switch (dtype) {
    case Dtype::kBf16:
      return DataType::kBFloat16;
    case Dtype::kFp16:
      return DataType::kFloat16;
    case Dtype::kFp8:
      return DataType::kFloat8E4M3;
    case Dtype::kFp32:
      return DataType::kFloat32;
    default:
      throw std::invalid_argument(
          fmt::format("the CUDA backend has no {} kernels", config::to_string(dtype)));
  }
}

DeviceBuffer<std::byte> random_buffer(int64_t elements, DataType type, uint64_t seed, cudaStream_t stream) {
  DeviceBuffer<std::byte> buffer(static_cast<size_t>(elements) * kernels::bytes_of(type));
  fill_uniform(buffer.data(), elements, type, seed, stream);
  return buffer;
}

}  // namespace

CudaBackend::CudaBackend(int devices, kernels::AttentionKernel attention) : attention_(attention) {
  const int available = kernels::cuda_device_count();
  if (devices < 1 || devices > available) {
    throw std::invalid_argument(fmt::format("--gpus {}: this node has {} CUDA devices", devices, available));
  }
  CUDA_CHECK(cudaSetDevice(0));
  if (!kernels::attention_kernel_available(attention)) {
    throw std::invalid_argument(
        fmt::format("--attention-kernel {}: device 0 cannot run it (it needs compute "
                    "capability 9.0)",
                    kernels::to_string(attention)));
  }
  facts_ = cuda_facts(devices);
  facts_.attention_kernel = kernels::to_string(attention);
  std::tie(compute_major_, compute_minor_) = compute_capability();
  capabilities_.scale = DeviceScale::kGpu;
  capabilities_.gemm_dtypes = {Dtype::kBf16, Dtype::kFp16};
  if (compute_major_ * 10 + compute_minor_ >= 89) capabilities_.gemm_dtypes.push_back(Dtype::kFp8);
  capabilities_.attention_dtypes = {Dtype::kBf16, Dtype::kFp16};
  capabilities_.attention_head_dims = {64, 128};
  capabilities_.max_case_flops = kMaxCaseFlops;
  blas_ = std::make_unique<kernels::BlasLt>();
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  facts_.context_bytes = static_cast<double>(total_bytes - free_bytes);
  host_cache_bytes_ = cpu::host_facts().cache_bytes;
  for (int d = 0; d < devices; ++d) {
    const kernels::DeviceGuard guard(d);
    copy_buffers_.push_back(std::make_unique<CopyBuffers>());
  }
}

CudaBackend::~CudaBackend() = default;

CudaBackend::PreparedGemm::PreparedGemm(kernels::BlasLt& blas, const kernels::GemmShape& shape,
                                        const kernels::GemmTypes& types)
    : plan(blas, shape, types) {}

std::vector<double> CudaBackend::PreparedGemm::time(cudaStream_t stream, const TimingPolicy& policy) {
  return time_with_events(stream, policy, static_cast<int>(sets.size()), [&](int set) {
    Set& s = sets[static_cast<size_t>(set)];
    plan.run(s.a.data(), s.b.data(), nullptr, s.d.data(), 1.0F, 0.0F, stream);
  });
}

std::unique_ptr<CudaBackend::PreparedGemm> CudaBackend::prepare_gemm(const GemmCase& c, cudaStream_t stream) {
  const kernels::GemmShape shape{c.m, c.n, c.k, false, true};  // Y = X·Wᵀ, the forward layout
  const DataType input = data_type(c.dtype);
  const kernels::GemmTypes types{input, input == DataType::kFloat8E4M3 ? DataType::kBFloat16 : input};
  if (!kernels::gemm_supported(shape, types, compute_major_, compute_minor_)) {
    throw std::invalid_argument(fmt::format("the cuBLASLt wrapper does not run {} here", describe(c)));
  }
  auto prepared = std::make_unique<PreparedGemm>(*blas_, shape, types);
  const double set_bytes =
      static_cast<double>((shape.a_elements() + shape.b_elements()) * kernels::bytes_of(types.input) +
                          shape.c_elements() * kernels::bytes_of(types.output));
  const int sets = rotation_sets(set_bytes, facts_.cache_bytes, kBudgetBytes);
  for (int s = 0; s < sets; ++s) {
    prepared->sets.push_back(
        {random_buffer(shape.a_elements(), types.input, 2 * s + 1, stream),
         random_buffer(shape.b_elements(), types.input, 2 * s + 2, stream),
         DeviceBuffer<std::byte>(static_cast<size_t>(shape.c_elements()) * kernels::bytes_of(types.output))});
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return prepared;
}

std::vector<double> CudaBackend::time_gemm(const GemmCase& c, const TimingPolicy& policy) {
  return prepare_gemm(c, stream_.get())->time(stream_.get(), policy);
}

std::vector<double> CudaBackend::time_attention(const AttentionCase& c, const TimingPolicy& policy) {
  const kernels::AttentionShape shape{c.batch, c.q_len, c.kv_len, c.heads, c.kv_heads, c.head_dim};
  kernels::validate(shape);
  const DataType type = data_type(c.dtype);
  const kernels::AttentionOptions options{c.causal, std::nullopt};
  const bool backward = c.pass == config::AttentionPass::kBackward;
  const cudaStream_t stream = stream_.get();
  const double element = static_cast<double>(kernels::bytes_of(type));
  double set_bytes = element * static_cast<double>(2 * shape.q_elements() + 2 * shape.kv_elements()) +
                     4.0 * static_cast<double>(shape.lse_elements());
  if (backward)
    set_bytes += element * shape.q_elements() + 4.0 * (shape.q_elements() + 2 * shape.kv_elements());
  const int sets = rotation_sets(set_bytes, facts_.cache_bytes, kBudgetBytes);
  struct Set {
    DeviceBuffer<std::byte> q, k, v, out, dout;
    DeviceBuffer<float> lse, dq, dk, dv, delta;
    kernels::AttentionFwdParams fwd;
    kernels::AttentionBwdParams bwd;
  };
  std::vector<Set> buffers(static_cast<size_t>(sets));
  for (size_t i = 0; i < buffers.size(); ++i) {
    Set& s = buffers[i];
    s.q = random_buffer(shape.q_elements(), type, 5 * i + 1, stream);
    s.k = random_buffer(shape.kv_elements(), type, 5 * i + 2, stream);
    s.v = random_buffer(shape.kv_elements(), type, 5 * i + 3, stream);
    s.out = DeviceBuffer<std::byte>(static_cast<size_t>(shape.q_elements()) * kernels::bytes_of(type));
    s.lse = DeviceBuffer<float>(static_cast<size_t>(shape.lse_elements()));
    s.fwd = kernels::make_forward_params(shape, options, type, s.q.data(), s.k.data(), s.v.data(),
                                         s.out.data(), s.lse.data());
    kernels::check_supported(s.fwd);
    if (!backward) continue;
    kernels::attention_forward(s.fwd, stream, attention_);  // out and lse, as the backward reads them
    s.dout = random_buffer(shape.q_elements(), type, 5 * i + 4, stream);
    s.dq = DeviceBuffer<float>(static_cast<size_t>(shape.q_elements()));
    s.dk = DeviceBuffer<float>(static_cast<size_t>(shape.kv_elements()));
    s.dv = DeviceBuffer<float>(static_cast<size_t>(shape.kv_elements()));
    s.delta = DeviceBuffer<float>(static_cast<size_t>(kernels::backward_delta_elements(s.fwd)));
    s.dq.fill_bytes_async(0, stream);
    s.dk.fill_bytes_async(0, stream);
    s.dv.fill_bytes_async(0, stream);
    s.bwd = kernels::make_backward_params(s.fwd, s.dout.data(), s.dq.data(), s.dk.data(), s.dv.data(),
                                          s.delta.data());
    kernels::check_supported(s.bwd);
  }
  return time_with_events(stream, policy, sets, [&](int set) {
    const Set& s = buffers[static_cast<size_t>(set)];
    if (backward) {
      kernels::attention_backward(s.bwd, stream, attention_);
    } else {
      kernels::attention_forward(s.fwd, stream, attention_);
    }
  });
}

CollectiveBench& CudaBackend::bench(int ranks) {
  std::unique_ptr<CollectiveBench>& b = benches_[ranks];
  if (!b) b = std::make_unique<CollectiveBench>(ranks);
  return *b;
}

std::vector<double> CudaBackend::time_collective(const CollectiveCase& c, const TimingPolicy& policy) {
  if (c.ranks < 1 || c.ranks > facts_.devices) {
    throw std::invalid_argument(fmt::format("{} ranks: {} GPUs in use", c.ranks, facts_.devices));
  }
  return bench(c.ranks).time(c, policy);
}

std::vector<double> CudaBackend::time_copy(const CopyCase& c, const TimingPolicy& policy) {
  if (c.concurrent < 1 || c.concurrent > facts_.devices) {
    throw std::invalid_argument(
        fmt::format("{} concurrent copies: {} GPUs in use", c.concurrent, facts_.devices));
  }
  const size_t bytes = static_cast<size_t>(c.bytes);
  const int sets = rotation_sets(c.bytes, std::max(host_cache_bytes_, facts_.cache_bytes), kBudgetBytes / 4);
  const size_t needed = bytes * static_cast<size_t>(sets);
  std::vector<int> devices;
  std::vector<cudaStream_t> streams;
  for (int d = 0; d < c.concurrent; ++d) {
    const kernels::DeviceGuard guard(d);
    CopyBuffers& b = *copy_buffers_[static_cast<size_t>(d)];
    if (b.host.bytes() < needed) {
      size_t size = size_t{1} << 20;
      while (size < needed) size *= 2;
      b.host = kernels::PinnedBuffer<std::byte>();
      b.device = DeviceBuffer<std::byte>();
      b.host = kernels::PinnedBuffer<std::byte>(size);
      b.device = DeviceBuffer<std::byte>(size);
    }
    devices.push_back(d);
    streams.push_back(b.stream.get());
  }
  const bool to_device = c.direction == config::CopyDirection::kHostToDevice;
  return time_with_events_on(devices, streams, policy, sets, [&](int set) {
    const size_t offset = bytes * static_cast<size_t>(set);
    for (int d = 0; d < c.concurrent; ++d) {
      const kernels::DeviceGuard guard(d);
      CopyBuffers& b = *copy_buffers_[static_cast<size_t>(d)];
      std::byte* host = b.host.data() + offset;
      std::byte* device = b.device.data() + offset;
      CUDA_CHECK(cudaMemcpyAsync(to_device ? device : host, to_device ? host : device, bytes,
                                 to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                 b.stream.get()));
    }
  });
}

std::vector<double> CudaBackend::time_device_copy(double bytes, const TimingPolicy& policy) {
  const size_t n = static_cast<size_t>(bytes);
  DeviceBuffer<std::byte> src(n);
  DeviceBuffer<std::byte> dst(n);
  src.fill_bytes_async(1, stream_.get());
  const cudaStream_t stream = stream_.get();
  return time_with_events(stream, policy, 1, [&](int) {
    CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), n, cudaMemcpyDeviceToDevice, stream));
  });
}

std::vector<double> CudaBackend::fpdt_sync_overhead(const TimingPolicy& policy) {
  // A small FPDT layer (4 chunks of 2048 tokens, 8 heads of 128): DeepSpeed's host syncs against
  // events only, same kernels (the calibrated attention kernels) and copies.
  const kernels::FpdtShape shape{1, 8, 8, 128, {2048, 2048, 2048, 2048}};
  const int64_t blocks = shape.chunks() * (shape.chunks() + 1) / 2;
  const cudaStream_t stream = stream_.get();
  kernels::DeviceSequenceIo io(shape, DataType::kBFloat16);
  const int64_t q_elements = shape.batch * shape.total_tokens() * shape.heads * shape.head_dim;
  const int64_t kv_elements = shape.batch * shape.total_tokens() * shape.kv_heads * shape.head_dim;
  fill_uniform(io.q().data(), q_elements, DataType::kBFloat16, 11, stream);
  fill_uniform(io.k().data(), kv_elements, DataType::kBFloat16, 12, stream);
  fill_uniform(io.v().data(), kv_elements, DataType::kBFloat16, 13, stream);
  stream_.synchronize();
  kernels::FpdtAttention with_events(
      shape, {true, kernels::FpdtSync::kEvents, DataType::kBFloat16, std::nullopt, attention_});
  kernels::FpdtAttention with_syncs(
      shape, {true, kernels::FpdtSync::kHostSyncs, DataType::kBFloat16, std::nullopt, attention_});
  const auto wall = [&](kernels::FpdtAttention& pipeline) {
    const double start = cpu::now_s();
    pipeline.forward(io);
    pipeline.synchronize();
    return cpu::now_s() - start;
  };
  for (int i = 0; i < std::max(1, policy.warmup); ++i) {
    wall(with_events);
    wall(with_syncs);
  }
  std::vector<double> per_block;
  for (int rep = 0; rep < policy.repetitions; ++rep) {
    const double events = wall(with_events);
    const double syncs = wall(with_syncs);
    per_block.push_back(std::max(1e-9, (syncs - events) / static_cast<double>(blocks)));
  }
  return per_block;
}

OverheadSamples CudaBackend::time_overheads(const TimingPolicy& policy) {
  OverheadSamples out;
  const cudaStream_t stream = stream_.get();
  constexpr int kLaunches = 1000;
  constexpr int kRoundTrips = 100;
  for (int i = 0; i < 100; ++i) launch_idle_kernel(stream);
  stream_.synchronize();
  for (int rep = 0; rep < policy.repetitions; ++rep) {
    const double start = cpu::now_s();
    for (int i = 0; i < kLaunches; ++i) launch_idle_kernel(stream);
    stream_.synchronize();
    out.launch_s.push_back((cpu::now_s() - start) / kLaunches);
  }
  const double launch = *std::min_element(out.launch_s.begin(), out.launch_s.end());
  for (int rep = 0; rep < policy.repetitions; ++rep) {
    const double start = cpu::now_s();
    for (int i = 0; i < kRoundTrips; ++i) {
      launch_idle_kernel(stream);
      stream_.synchronize();
    }
    out.host_sync_s.push_back(std::max(1e-9, (cpu::now_s() - start) / kRoundTrips - launch));
  }
  out.pipeline_sync_s = fpdt_sync_overhead(policy);
  return out;
}

InterferenceSamples CudaBackend::time_interference(const GemmCase& gemm, const CollectiveCase& collective,
                                                   const TimingPolicy& policy) {
  if (collective.ranks < 1 || collective.ranks > facts_.devices) {
    throw std::invalid_argument("interference collective larger than the GPUs in use");
  }
  InterferenceSamples out;
  const std::unique_ptr<PreparedGemm> prepared = prepare_gemm(gemm, stream_.get());
  out.alone_s = prepared->time(stream_.get(), policy);
  CollectiveBench& b = bench(collective.ranks);
  const std::vector<double> collective_runs = b.time(collective, TimingPolicy{1, 3, 0, 1});
  const double collective_s = *std::min_element(collective_runs.begin(), collective_runs.end());
  // The GEMM timing window: warm-up, the probe run, then the repetitions of at least
  // min_repetition_s; the collectives queued must outlast it.
  const double gemm_s = *std::min_element(out.alone_s.begin(), out.alone_s.end());
  const double window =
      (policy.warmup + 1) * gemm_s + policy.repetitions * std::max(gemm_s, policy.min_repetition_s);
  const int count = static_cast<int>(std::clamp(std::ceil(2.0 * window / collective_s) + 2, 2.0, 1000.0));
  b.enqueue(collective, count);
  out.concurrent_s = prepared->time(stream_.get(), policy);
  out.overlapped = b.busy();
  b.synchronize();
  return out;
}

PowerSamples CudaBackend::measure_power(const GemmCase& gemm, double copy_bytes, double hold_s) {
  std::array<char, 32> bus{};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), 0));
  const PowerMeter meter(bus.data());
  const cudaStream_t stream = stream_.get();
  // The mean board power while `step` (enqueued back to back, in batches of about 20 ms between
  // host synchronisations) holds the GPU in one state: held `hold_s` to settle, then `hold_s` measured.
  const auto hold = [&](const std::function<void()>& step) {
    step();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    double batch_start = cpu::now_s();
    step();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const int batch = std::max(1, static_cast<int>(0.02 / std::max(1e-6, cpu::now_s() - batch_start)));
    const auto run_for = [&](double seconds) {
      for (const double until = cpu::now_s() + seconds; cpu::now_s() < until;) {
        for (int i = 0; i < batch; ++i) step();
        CUDA_CHECK(cudaStreamSynchronize(stream));
      }
    };
    run_for(hold_s);
    const double energy_j = meter.energy_j();
    batch_start = cpu::now_s();
    run_for(hold_s);
    return (meter.energy_j() - energy_j) / (cpu::now_s() - batch_start);
  };
  PowerSamples out;
  out.limit_w = meter.limit_w();
  out.idle_w = hold([] { std::this_thread::sleep_for(std::chrono::milliseconds(10)); });
  const std::unique_ptr<PreparedGemm> prepared = prepare_gemm(gemm, stream);
  size_t set = 0;
  out.compute_w = hold([&] {
    PreparedGemm::Set& s = prepared->sets[set++ % prepared->sets.size()];
    prepared->plan.run(s.a.data(), s.b.data(), nullptr, s.d.data(), 1.0F, 0.0F, stream);
  });
  const auto n = static_cast<size_t>(copy_bytes);
  DeviceBuffer<std::byte> src(n);
  DeviceBuffer<std::byte> dst(n);
  src.fill_bytes_async(1, stream);
  out.memory_w =
      hold([&] { CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), n, cudaMemcpyDeviceToDevice, stream)); });
  return out;
}

}  // namespace trainsim::calibrate::cuda
