// Starting a multi-process NCCL job without linking MPI: the rank and size the launcher (mpirun,
// srun, torchrun) put in the environment, and the exchange of rank 0's ncclUniqueId through a file
// every process can read.
#ifndef TRAINSIM_KERNELS_NCCL_BOOTSTRAP_H_
#define TRAINSIM_KERNELS_NCCL_BOOTSTRAP_H_

#include <chrono>
#include <optional>
#include <string>

#include <nccl.h>

namespace trainsim::kernels {

struct LaunchInfo {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // the process's index on its node: use it as the CUDA device
};

// The first complete set among OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK} (Open MPI),
// PMI_{RANK,SIZE} + MPI_LOCALRANKID (MPICH, Intel MPI), SLURM_{PROCID,NTASKS,LOCALID} (srun) and
// RANK, WORLD_SIZE, LOCAL_RANK (torchrun); empty when the process was not launched by any of them.
// Throws std::invalid_argument when a variable is set but is not a valid number.
std::optional<LaunchInfo> launch_info_from_environment();

// Rank 0 creates the id (ncclGetUniqueId) and writes it to `path` atomically (a temporary file,
// then rename); the other ranks wait for the file and read it. `path` must be new for each job (a
// stale file from an earlier job would be read). Throws std::runtime_error when the file cannot be
// written, or does not appear (or is truncated) within `timeout`; GpuError from NCCL.
ncclUniqueId exchange_unique_id(const std::string& path, int rank, std::chrono::milliseconds timeout);

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_NCCL_BOOTSTRAP_H_
