#include "calibrate/cpu/cpu_backend.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "calibrate/collective_kinds.h"
#include "calibrate/cpu/cpu_facts.h"
#include "calibrate/cpu/host_timer.h"
#include "calibrate/cpu/shared_memory_collectives.h"
#include "kernels/reference/attention.h"
#include "kernels/reference/gemm.h"

namespace trainsim::calibrate::cpu {
namespace {

using config::Dtype;

constexpr double kBudgetBytes = 256.0 * 1024 * 1024;  // rotating buffers, per case
constexpr double kMaxCaseFlops = 4e9;                 // a few seconds of the reference GEMM

// The compiler that built this file, and with it the CPU references of kernels/ (one toolchain
// builds the project): "GCC 12.2.0", "Debian Clang 14.0.6"; empty for another compiler.
std::string compiler_version() {
#if defined(__clang__)
  return __VERSION__;
#elif defined(__GNUC__)
  return "GCC " __VERSION__;
#else
  return "";
#endif
}

// Deterministic, never-zero values in [-1, 1].
template <typename T>
void fill(std::vector<T>& values, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (T& v : values) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v = static_cast<T>(static_cast<double>(x >> 11) / static_cast<double>(1ULL << 53) * 1.96 - 0.98 + 0.01);
  }
}

template <typename T>
std::vector<double> time_gemm_as(const GemmCase& c, const TimingPolicy& policy, double cache_bytes) {
  const kernels::GemmShape shape{c.m, c.n, c.k, false, true};
  const double set_bytes =
      static_cast<double>(shape.a_elements() + shape.b_elements() + shape.c_elements()) * sizeof(T);
  const int sets = rotation_sets(set_bytes, cache_bytes, kBudgetBytes);
  struct Set {
    std::vector<T> a, b, d;
  };
  std::vector<Set> buffers(static_cast<size_t>(sets));
  for (size_t i = 0; i < buffers.size(); ++i) {
    buffers[i].a.resize(static_cast<size_t>(shape.a_elements()));
    buffers[i].b.resize(static_cast<size_t>(shape.b_elements()));
    buffers[i].d.resize(static_cast<size_t>(shape.c_elements()));
    fill(buffers[i].a, 2 * i + 1);
    fill(buffers[i].b, 2 * i + 2);
  }
  return time_on_host(policy, sets, [&](int set) {
    Set& s = buffers[static_cast<size_t>(set)];
    kernels::reference::gemm<T>(shape, 1.0, s.a, s.b, 0.0, {}, s.d);
  });
}

kernels::AttentionShape shape_of(const AttentionCase& c) {
  return {c.batch, c.q_len, c.kv_len, c.heads, c.kv_heads, c.head_dim};
}

// Runs `op(rank, set)` on every rank of `group` in step, timed by rank 0 from a common start (a
// barrier) to the end of the op; `op` must end with a barrier of the group so the time is the
// slowest rank's. Returns seconds per op, one entry per repetition.
std::vector<double> time_in_group(ThreadGroup& group, const TimingPolicy& policy, int sets,
                                  const std::function<void(int rank, int set)>& op) {
  std::vector<double> durations;
  int runs = 1;
  group.run([&](int rank) {
    SetRotation rotation(sets);
    double single_s = 0;
    for (int i = 0; i < std::max(1, policy.warmup); ++i) {
      group.barrier();
      const double start = now_s();
      op(rank, rotation.next());
      single_s = now_s() - start;
    }
    if (rank == 0) runs = runs_per_repetition(single_s, policy);
    group.barrier();
    const int my_runs = runs;
    for (int rep = 0; rep < policy.repetitions; ++rep) {
      group.barrier();
      const double start = now_s();
      for (int i = 0; i < my_runs; ++i) op(rank, rotation.next());
      if (rank == 0) durations.push_back((now_s() - start) / my_runs);
    }
  });
  return durations;
}

}  // namespace

CpuBackend::CpuBackend(int devices) {
  const HostFacts host = host_facts();
  if (devices < 1 || devices > host.logical_cpus) {
    throw std::invalid_argument(fmt::format(
        "--gpus {}: the CPU backend runs one worker thread per device, 1 to {} on this machine ({} logical "
        "CPUs)",
        devices, host.logical_cpus, host.logical_cpus));
  }
  facts_.backend = "cpu";
  facts_.device_name = host.cpu_name.empty() ? "cpu" : "cpu: " + host.cpu_name;
  facts_.devices = devices;
  facts_.multiprocessors = host.logical_cpus;
  facts_.clock_hz = host.max_clock_hz;
  facts_.memory_bytes = host.memory_bytes;
  facts_.cache_bytes = host.cache_bytes > 0 ? host.cache_bytes : 32.0 * 1024 * 1024;
  facts_.host_memory_bytes = host.memory_bytes;
  facts_.host_name = host.host_name;
  facts_.host_cpu = host.cpu_name;
  facts_.compiler = compiler_version();
  facts_.attention_kernel = "reference";
  capabilities_.scale = DeviceScale::kCpuReference;
  capabilities_.gemm_dtypes = {Dtype::kFp32, Dtype::kFp64};
  capabilities_.attention_dtypes = {Dtype::kFp32};
  capabilities_.attention_head_dims = {64, 128};
  capabilities_.max_case_flops = kMaxCaseFlops;
}

ThreadGroup& CpuBackend::group(int ranks) {
  std::unique_ptr<ThreadGroup>& g = groups_[ranks];
  if (!g) g = std::make_unique<ThreadGroup>(ranks);
  return *g;
}

std::vector<double> CpuBackend::time_gemm(const GemmCase& c, const TimingPolicy& policy) {
  switch (c.dtype) {
    case Dtype::kFp32:
      return time_gemm_as<float>(c, policy, facts_.cache_bytes);
    case Dtype::kFp64:
      return time_gemm_as<double>(c, policy, facts_.cache_bytes);
    default:
      throw std::invalid_argument(fmt::format("the CPU backend has no {} GEMM", config::to_string(c.dtype)));
  }
}

std::vector<double> CpuBackend::time_attention(const AttentionCase& c, const TimingPolicy& policy) {
  if (c.dtype != Dtype::kFp32) {
    throw std::invalid_argument(
        fmt::format("the CPU backend has no {} attention", config::to_string(c.dtype)));
  }
  const kernels::AttentionShape shape = shape_of(c);
  kernels::validate(shape);
  const kernels::AttentionOptions options{c.causal, std::nullopt};
  const bool backward = c.pass == config::AttentionPass::kBackward;
  const double set_bytes =
      static_cast<double>((backward ? 4 : 2) * shape.q_elements() + 2 * shape.kv_elements() +
                          shape.lse_elements() + (backward ? 2 * shape.kv_elements() : 0)) *
      sizeof(float);
  const int sets = rotation_sets(set_bytes, facts_.cache_bytes, kBudgetBytes);
  struct Set {
    std::vector<float> q, k, v, out, lse, dout, dq, dk, dv;
  };
  std::vector<Set> buffers(static_cast<size_t>(sets));
  for (size_t i = 0; i < buffers.size(); ++i) {
    Set& s = buffers[i];
    s.q.resize(static_cast<size_t>(shape.q_elements()));
    s.k.resize(static_cast<size_t>(shape.kv_elements()));
    s.v.resize(static_cast<size_t>(shape.kv_elements()));
    s.out.resize(static_cast<size_t>(shape.q_elements()));
    s.lse.resize(static_cast<size_t>(shape.lse_elements()));
    fill(s.q, 3 * i + 1);
    fill(s.k, 3 * i + 2);
    fill(s.v, 3 * i + 3);
    if (backward) {
      kernels::reference::attention_forward<float>(shape, options, {s.q, s.k, s.v}, s.out, s.lse);
      s.dout.resize(s.out.size());
      fill(s.dout, 7 * i + 5);
      s.dq.resize(s.q.size());
      s.dk.resize(s.k.size());
      s.dv.resize(s.v.size());
    }
  }
  return time_on_host(policy, sets, [&](int set) {
    Set& s = buffers[static_cast<size_t>(set)];
    if (backward) {
      kernels::reference::attention_backward<float>(shape, options, {s.q, s.k, s.v, s.out, s.lse, s.dout},
                                                    s.dq, s.dk, s.dv);
    } else {
      kernels::reference::attention_forward<float>(shape, options, {s.q, s.k, s.v}, s.out, s.lse);
    }
  });
}

std::vector<double> CpuBackend::time_collective(const CollectiveCase& c, const TimingPolicy& policy) {
  const std::vector<config::CollectiveKind>& kinds = measured_collectives();
  if (std::find(kinds.begin(), kinds.end(), c.kind) == kinds.end()) {
    throw std::invalid_argument(fmt::format("the CPU backend has no {}", config::to_string(c.kind)));
  }
  if (c.ranks < 1 || c.ranks > facts_.devices) {
    throw std::invalid_argument(
        fmt::format("{} ranks: the CPU backend has {} devices", c.ranks, facts_.devices));
  }
  ThreadGroup& g = group(c.ranks);
  const RankBuffers per_rank = rank_buffers(c.kind, c.ranks, c.bytes);
  const double set_bytes = (per_rank.send_bytes + per_rank.recv_bytes) * c.ranks;
  const int sets = rotation_sets(set_bytes, facts_.cache_bytes, kBudgetBytes);
  SharedMemoryCollectives collectives(g, std::max(per_rank.send_bytes, per_rank.recv_bytes) + sizeof(float),
                                      sets);
  return time_in_group(g, policy, sets,
                       [&](int rank, int set) { collectives.run(rank, c.kind, c.bytes, set); });
}

std::vector<double> CpuBackend::time_copy(const CopyCase& c, const TimingPolicy& policy) {
  if (c.concurrent < 1 || c.concurrent > facts_.devices) {
    throw std::invalid_argument(
        fmt::format("{} concurrent copies: the CPU backend has {} devices", c.concurrent, facts_.devices));
  }
  ThreadGroup& g = group(c.concurrent);
  const size_t bytes = static_cast<size_t>(c.bytes);
  const int sets = rotation_sets(2.0 * c.bytes * c.concurrent, facts_.cache_bytes, kBudgetBytes);
  // [rank][set]: the "host" and "device" buffers of each worker (both host memory on this backend).
  std::vector<std::vector<std::byte>> host(static_cast<size_t>(c.concurrent * sets),
                                           std::vector<std::byte>(bytes));
  std::vector<std::vector<std::byte>> device(host.size(), std::vector<std::byte>(bytes));
  const bool to_device = c.direction == config::CopyDirection::kHostToDevice;
  return time_in_group(g, policy, sets, [&](int rank, int set) {
    const size_t i = static_cast<size_t>(rank * sets + set);
    std::memcpy(to_device ? device[i].data() : host[i].data(), to_device ? host[i].data() : device[i].data(),
                bytes);
    g.barrier();
  });
}

std::vector<double> CpuBackend::time_device_copy(double bytes, const TimingPolicy& policy) {
  const size_t n = static_cast<size_t>(bytes);
  std::vector<std::byte> src(n, std::byte{1});
  std::vector<std::byte> dst(n, std::byte{0});
  return time_on_host(policy, 1, [&](int) { std::memcpy(dst.data(), src.data(), n); });
}

OverheadSamples CpuBackend::time_overheads(const TimingPolicy& policy) {
  OverheadSamples out;
  // The smallest reference kernel call: what dispatching one kernel costs on this device.
  const kernels::GemmShape tiny{1, 1, 1, false, true};
  std::vector<float> a{1.0F}, b{1.0F}, d{0.0F};
  out.launch_s =
      time_on_host(policy, 1, [&](int) { kernels::reference::gemm<float>(tiny, 1.0, a, b, 0.0, {}, d); });
  // Handing an empty task to a worker thread and waiting for it: the CPU's enqueue + synchronise.
  ThreadGroup& one = group(1);
  const std::function<void(int)> nothing = [](int) {};
  out.host_sync_s = time_on_host(policy, 1, [&](int) { one.run(nothing); });
  return out;
}

InterferenceSamples CpuBackend::time_interference(const GemmCase& gemm, const CollectiveCase& collective,
                                                  const TimingPolicy& policy) {
  InterferenceSamples out;
  out.alone_s = time_gemm(gemm, policy);
  if (collective.ranks < 1 || collective.ranks > facts_.devices) {
    throw std::invalid_argument("interference collective larger than the node");
  }
  ThreadGroup background(collective.ranks);  // threads of their own, beside the GEMM's
  SharedMemoryCollectives collectives(background, collective.bytes + sizeof(float), 1);
  std::atomic<bool> stop{false};
  bool go = true;
  std::thread driver([&] {
    background.run([&](int rank) {
      for (;;) {
        if (rank == 0) go = !stop.load();
        background.barrier();
        if (!go) return;
        collectives.run(rank, collective.kind, collective.bytes, 0);
      }
    });
  });
  out.concurrent_s = time_gemm(gemm, policy);
  stop = true;
  driver.join();
  return out;
}

PowerSamples CpuBackend::measure_power(const GemmCase&, double, double) {
  throw std::invalid_argument("the CPU backend reads no GPU board power");
}

}  // namespace trainsim::calibrate::cpu
