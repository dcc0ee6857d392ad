// The NCCL section of the bench (sections.h).
#include <cstddef>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/bench/sections.h"
#include "kernels/bench/verify.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/stream.h"
#include "kernels/nccl/communicator.h"

namespace trainsim::kernels::bench {

void check_nccl(Report& report) {
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  std::vector<int> ids(static_cast<size_t>(devices));
  for (int d = 0; d < devices; ++d) {
    ids[d] = d;
  }
  std::vector<Communicator> comms = Communicator::create_local(ids);
  const size_t n = comms.size();
  const size_t count = 1024 * n;
  std::vector<Stream> streams;
  std::vector<DeviceBuffer<float>> send, reduced, gathered, exchanged;
  for (Communicator& comm : comms) {
    const DeviceGuard guard(comm.device());
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) {
      values[i] = static_cast<float>(comm.rank() * 100000 + static_cast<int>(i));
    }
    streams.emplace_back();
    send.emplace_back(count);
    send.back().copy_from_host(values);
    reduced.emplace_back(count);
    gathered.emplace_back(count * n);
    exchanged.emplace_back(count);
  }
  NcclGroup group;
  for (size_t r = 0; r < n; ++r) {
    comms[r].all_reduce(send[r].data(), reduced[r].data(), count, DataType::kFloat32, ReduceOp::kSum,
                        streams[r].get());
    comms[r].all_gather(send[r].data(), gathered[r].data(), count, DataType::kFloat32, streams[r].get());
    comms[r].all_to_all(send[r].data(), exchanged[r].data(), count / n, DataType::kFloat32, streams[r].get());
  }
  group.end();
  Check check(0.0);
  for (size_t r = 0; r < n; ++r) {
    streams[r].synchronize();
    const std::vector<float> sum = reduced[r].copy_to_host();
    const std::vector<float> all = gathered[r].copy_to_host();
    const std::vector<float> swapped = exchanged[r].copy_to_host();
    for (size_t i = 0; i < count; i += 97) {
      check.value(sum[i], 100000.0 * n * (n - 1) / 2 + static_cast<double>(n * i), 1.0, "all_reduce");
      const size_t source = i / (count / n);
      check.value(swapped[i], source * 100000.0 + static_cast<double>(r * (count / n) + i % (count / n)), 1.0,
                  "all_to_all");
    }
    for (size_t i = 0; i < count * n; i += 97) {
      check.value(all[i], (i / count) * 100000.0 + static_cast<double>(i % count), 1.0, "all_gather");
    }
  }
  barrier_all(comms, [&] {
    std::vector<cudaStream_t> handles;
    for (const Stream& s : streams) {
      handles.push_back(s.get());
    }
    return handles;
  }());
  report.add({"NCCL all_reduce, all_gather, all_to_all, barrier", std::to_string(n) + " local GPU(s)", 0.0,
              0.0, 0.0, 0.0, check.summary()});
}

}  // namespace trainsim::kernels::bench
