// The NCCL wrapper over every local GPU (one rank per GPU, one process): each collective's result
// against its definition. Skipped without a device.
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/cuda/device.h"
#include "kernels/cuda/stream.h"
#include "kernels/nccl/communicator.h"
#include "tests/kernels/gpu_test_util.h"

namespace trainsim::kernels {
namespace {

struct Rank {
  Communicator comm;
  Stream stream;
  DeviceBuffer<float> send;
  DeviceBuffer<float> recv;
};

// One communicator per local device; rank r sends r·1000 + i at element i.
std::vector<Rank> make_ranks(size_t send_count, size_t recv_count) {
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  std::vector<int> ids(static_cast<size_t>(devices));
  std::iota(ids.begin(), ids.end(), 0);
  std::vector<Communicator> comms = Communicator::create_local(ids);
  std::vector<Rank> ranks;
  for (Communicator& comm : comms) {
    const DeviceGuard guard(comm.device());
    std::vector<float> values(send_count);
    for (size_t i = 0; i < send_count; ++i) {
      values[i] = static_cast<float>(comm.rank() * 1000 + static_cast<int>(i));
    }
    DeviceBuffer<float> send(send_count);
    send.copy_from_host(values);
    ranks.push_back({std::move(comm), Stream(), std::move(send), DeviceBuffer<float>(recv_count)});
  }
  return ranks;
}

template <typename Collective>
void run_all(std::vector<Rank>& ranks, Collective collective) {
  NcclGroup group;
  for (Rank& r : ranks) {
    const DeviceGuard guard(r.comm.device());
    collective(r);
  }
  group.end();
  for (Rank& r : ranks) {
    r.stream.synchronize();
  }
}

TEST(NcclGpu, Collectives) {
  TRAINSIM_SKIP_WITHOUT_GPU();
  constexpr size_t kCount = 64;
  {
    std::vector<Rank> ranks = make_ranks(kCount, kCount);
    const int n = static_cast<int>(ranks.size());
    run_all(ranks, [](Rank& r) {
      r.comm.all_reduce(r.send.data(), r.recv.data(), kCount, DataType::kFloat32, ReduceOp::kSum,
                        r.stream.get());
    });
    for (Rank& r : ranks) {
      const std::vector<float> got = r.recv.copy_to_host();
      for (size_t i = 0; i < kCount; ++i) {
        EXPECT_EQ(got[i], static_cast<float>(1000 * n * (n - 1) / 2 + n * static_cast<int>(i)));
      }
    }
  }
  {
    std::vector<Rank> ranks = make_ranks(kCount, kCount * 8);
    const size_t n = ranks.size();
    run_all(ranks, [](Rank& r) {
      r.comm.all_gather(r.send.data(), r.recv.data(), kCount, DataType::kFloat32, r.stream.get());
    });
    for (Rank& r : ranks) {
      const std::vector<float> got = r.recv.copy_to_host();
      for (size_t i = 0; i < kCount * n; ++i) {
        EXPECT_EQ(got[i],
                  static_cast<float>(static_cast<int>(i / kCount) * 1000 + static_cast<int>(i % kCount)));
      }
    }
  }
  {
    std::vector<Rank> ranks = make_ranks(kCount, kCount);
    const size_t n = ranks.size();
    const size_t block = kCount / n;
    run_all(ranks, [&](Rank& r) {
      r.comm.reduce_scatter(r.send.data(), r.recv.data(), block, DataType::kFloat32, ReduceOp::kSum,
                            r.stream.get());
    });
    for (Rank& r : ranks) {
      const std::vector<float> got = r.recv.copy_to_host();
      for (size_t i = 0; i < block; ++i) {
        const size_t element = r.comm.rank() * block + i;
        EXPECT_EQ(got[i], static_cast<float>(1000 * n * (n - 1) / 2 + n * element));
      }
    }
  }
  {
    std::vector<Rank> ranks = make_ranks(kCount, kCount);
    const size_t n = ranks.size();
    const size_t block = kCount / n;
    run_all(ranks, [&](Rank& r) {
      r.comm.all_to_all(r.send.data(), r.recv.data(), block, DataType::kFloat32, r.stream.get());
    });
    for (Rank& r : ranks) {
      const std::vector<float> got = r.recv.copy_to_host();
      for (size_t source = 0; source < n; ++source) {
        for (size_t i = 0; i < block; ++i) {
          EXPECT_EQ(got[source * block + i], static_cast<float>(source * 1000 + r.comm.rank() * block + i));
        }
      }
    }
  }
  {
    // Ring: each rank sends to the next and receives from the previous (itself with one GPU).
    std::vector<Rank> ranks = make_ranks(kCount, kCount);
    const int n = static_cast<int>(ranks.size());
    run_all(ranks, [&](Rank& r) {
      r.comm.send(r.send.data(), kCount, DataType::kFloat32, (r.comm.rank() + 1) % n, r.stream.get());
      r.comm.recv(r.recv.data(), kCount, DataType::kFloat32, (r.comm.rank() + n - 1) % n, r.stream.get());
    });
    for (Rank& r : ranks) {
      const std::vector<float> got = r.recv.copy_to_host();
      EXPECT_EQ(got[5], static_cast<float>(((r.comm.rank() + n - 1) % n) * 1000 + 5));
    }
  }
  {
    std::vector<Rank> ranks = make_ranks(1, 1);
    std::vector<Communicator> comms;
    std::vector<cudaStream_t> streams;
    for (Rank& r : ranks) {
      comms.push_back(std::move(r.comm));
      streams.push_back(r.stream.get());
    }
    barrier_all(comms, streams);
  }
}

}  // namespace
}  // namespace trainsim::kernels
