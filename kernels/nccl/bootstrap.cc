#include "kernels/nccl/bootstrap.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>

#include "kernels/cuda/check.h"

namespace trainsim::kernels {

namespace {

std::optional<int> env_int(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    return std::nullopt;
  }
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < 0 || parsed > 1 << 30) {
    throw std::invalid_argument(std::string("environment variable ") + name + "='" + value +
                                "' is not a rank or size");
  }
  return static_cast<int>(parsed);
}

std::optional<LaunchInfo> from(const char* rank, const char* size, const char* local_rank) {
  const std::optional<int> r = env_int(rank);
  const std::optional<int> s = env_int(size);
  if (!r || !s) {
    return std::nullopt;
  }
  return LaunchInfo{*r, *s, env_int(local_rank).value_or(0)};
}

}  // namespace

std::optional<LaunchInfo> launch_info_from_environment() {
  for (const auto& [rank, size, local] :
       {std::tuple{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
        std::tuple{"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
        std::tuple{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
        std::tuple{"RANK", "WORLD_SIZE", "LOCAL_RANK"}}) {
    if (std::optional<LaunchInfo> info = from(rank, size, local)) {
      return info;
    }
  }
  return std::nullopt;
}

ncclUniqueId exchange_unique_id(const std::string& path, int rank, std::chrono::milliseconds timeout) {
  ncclUniqueId id{};
  if (rank == 0) {
    NCCL_CHECK(ncclGetUniqueId(&id));
    const std::string temporary = path + ".tmp";
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out.write(id.internal, sizeof(id.internal));
      if (!out) {
        throw std::runtime_error("cannot write the NCCL unique id to " + temporary);
      }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
      throw std::runtime_error("cannot rename " + temporary + " to " + path);
    }
    return id;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::ifstream in(path, std::ios::binary);
    if (in && in.read(id.internal, sizeof(id.internal))) {
      return id;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw std::runtime_error("no NCCL unique id in " + path + " after " + std::to_string(timeout.count()) +
                               " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace trainsim::kernels
