// The class of a GPU kernel, from the name a profiler records for it.
#ifndef TRAINSIM_SIM_MEASURED_KERNEL_NAMES_H_
#define TRAINSIM_SIM_MEASURED_KERNEL_NAMES_H_

#include <string_view>

#include "sim/measured/activity.h"

namespace trainsim::measured {

// The class of the kernel `name` (case is ignored), first match wins:
//   NCCL/RCCL kernels ("nccl..."), DeepEP's dispatch and combine -> by collective (AllReduce,
//     AllGather, ReduceScatter, SendRecv or AllToAll -> send/recv, others -> other collective)
//   flash, fmha, attn, attention, sdpa -> attention (before GEMMs: CUTLASS builds some of these)
//   gemm, gemv, nvjet (cuBLAS 12.8+), xmma, cutlass, matmul -> gemm
//   multi_tensor_apply, adam, lamb, optimizer -> optimizer
//   anything else -> memory-bound
ActivityClass classify_kernel(std::string_view name);

// The class of a copy or memset a profiler records by its name ("Memcpy HtoD (Pinned -> Device)",
// "Memcpy DtoD ...", "Memset ..."): a host copy when host memory is on one side, else memory-bound.
ActivityClass classify_copy(std::string_view name);

}  // namespace trainsim::measured

#endif  // TRAINSIM_SIM_MEASURED_KERNEL_NAMES_H_
