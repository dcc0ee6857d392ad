#include "calibrate/cpu/cpu_backend.h"

#include <atomic>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "calibrate/cpu/cpu_facts.h"
#include "calibrate/cpu/shared_memory_collectives.h"
#include "calibrate/cpu/thread_group.h"
#include "calibrate/statistics.h"

namespace trainsim::calibrate::cpu {
namespace {

using config::CollectiveKind;

TimingPolicy tiny() { return {1, 3, 0, 10}; }

int devices() { return std::min(2, host_facts().logical_cpus); }

void expect_positive(const std::vector<double>& durations, int count) {
  ASSERT_EQ(durations.size(), static_cast<size_t>(count));
  for (const double d : durations) EXPECT_GT(d, 0);
}

TEST(CpuBackend, DescribesTheHost) {
  const CpuBackend backend(1);
  EXPECT_EQ(backend.facts().backend, "cpu");
  EXPECT_EQ(backend.facts().device_name.rfind("cpu", 0), 0u);
  EXPECT_GT(backend.facts().memory_bytes, 0);
  EXPECT_GT(backend.facts().cache_bytes, 0);
  EXPECT_EQ(backend.capabilities().scale, DeviceScale::kCpuReference);
  EXPECT_THROW(CpuBackend(0), std::invalid_argument);
  EXPECT_THROW(CpuBackend(host_facts().logical_cpus + 1), std::invalid_argument);
}

TEST(CpuBackend, TimesTheReferenceKernels) {
  CpuBackend backend(1);
  expect_positive(backend.time_gemm({config::Dtype::kFp32, 16, 24, 32}, tiny()), 3);
  expect_positive(backend.time_gemm({config::Dtype::kFp64, 8, 8, 8}, tiny()), 3);
  for (const auto pass : {config::AttentionPass::kForward, config::AttentionPass::kBackward}) {
    expect_positive(backend.time_attention({pass, true, config::Dtype::kFp32, 1, 2, 1, 32, 32, 16}, tiny()),
                    3);
  }
  EXPECT_THROW(backend.time_gemm({config::Dtype::kBf16, 8, 8, 8}, tiny()), std::invalid_argument);
  EXPECT_THROW(backend.time_attention(
                   {config::AttentionPass::kForward, false, config::Dtype::kBf16, 1, 1, 1, 8, 8, 8}, tiny()),
               std::invalid_argument);
}

TEST(CpuBackend, LargerGemmsTakeLonger) {
  CpuBackend backend(1);
  const TimingPolicy policy{1, 3, 0, 1};
  const double small = median(backend.time_gemm({config::Dtype::kFp32, 16, 16, 16}, policy));
  const double large = median(backend.time_gemm({config::Dtype::kFp32, 128, 128, 128}, policy));
  EXPECT_GT(large, 20 * small);  // 512 times the FLOPs
}

TEST(CpuBackend, TimesCollectivesCopiesAndOverheads) {
  CpuBackend backend(devices());
  for (const CollectiveKind kind :
       {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
        CollectiveKind::kAllToAll, CollectiveKind::kSendRecv, CollectiveKind::kBarrier}) {
    for (int ranks = 1; ranks <= devices(); ++ranks) {
      SCOPED_TRACE(std::string(config::to_string(kind)) + " " + std::to_string(ranks));
      expect_positive(
          backend.time_collective({kind, ranks, kind == CollectiveKind::kBarrier ? 0.0 : 65536.0}, tiny()),
          3);
    }
  }
  EXPECT_THROW(backend.time_collective({CollectiveKind::kBroadcast, 1, 1024}, tiny()), std::invalid_argument);
  EXPECT_THROW(backend.time_collective({CollectiveKind::kAllReduce, devices() + 1, 1024}, tiny()),
               std::invalid_argument);
  expect_positive(backend.time_copy({config::CopyDirection::kHostToDevice, devices(), 4096}, tiny()), 3);
  expect_positive(backend.time_device_copy(1 << 20, tiny()), 3);
  const OverheadSamples overheads = backend.time_overheads(tiny());
  expect_positive(overheads.launch_s, 3);
  expect_positive(overheads.host_sync_s, 3);
  EXPECT_TRUE(overheads.pipeline_sync_s.empty());
  const InterferenceSamples interference = backend.time_interference(
      {config::Dtype::kFp32, 32, 32, 32}, {CollectiveKind::kAllReduce, 1, 4096}, tiny());
  expect_positive(interference.alone_s, 3);
  expect_positive(interference.concurrent_s, 3);
}

// The shared-memory collectives move and reduce real data, with nccl-tests' layouts.
TEST(SharedMemoryCollectives, DeliverWhatEachCollectiveDefines) {
  constexpr int kRanks = 3;
  constexpr size_t kBlock = 4;  // floats per rank
  const double bytes = kRanks * kBlock * sizeof(float);
  ThreadGroup group(kRanks);
  SharedMemoryCollectives collectives(group, bytes, 1);
  const auto run = [&](CollectiveKind kind) {
    group.run([&](int rank) { collectives.run(rank, kind, bytes, 0); });
  };
  const float sum = 1 + 2 + 3;  // send buffers hold 1 + rank

  run(CollectiveKind::kAllReduce);
  for (int r = 0; r < kRanks; ++r) {
    for (size_t i = 0; i < kRanks * kBlock; ++i)
      EXPECT_EQ(collectives.received(r, 0)[i], sum) << r << " " << i;
  }
  run(CollectiveKind::kReduceScatter);
  for (int r = 0; r < kRanks; ++r) {
    for (size_t i = 0; i < kBlock; ++i) EXPECT_EQ(collectives.received(r, 0)[i], sum);
  }
  for (const CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kAllToAll}) {
    run(kind);
    for (int r = 0; r < kRanks; ++r) {
      for (size_t i = 0; i < kRanks * kBlock; ++i) {
        EXPECT_EQ(collectives.received(r, 0)[i], 1.0F + static_cast<float>(i / kBlock)) << r << " " << i;
      }
    }
  }
  run(CollectiveKind::kSendRecv);
  for (int r = 0; r < kRanks; ++r)
    EXPECT_EQ(collectives.received(r, 0)[0], 1.0F + static_cast<float>((r + 2) % 3));
}

TEST(ThreadGroup, RunsEveryRankAndSynchronises) {
  ThreadGroup group(4);
  std::atomic<int> before{0};
  std::atomic<int> wrong{0};
  group.run([&](int) {
    ++before;
    group.barrier();
    if (before.load() != 4) ++wrong;
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_THROW(ThreadGroup(0), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::calibrate::cpu
