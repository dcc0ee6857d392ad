// What a profiler's names say: the class of a GPU kernel or copy, the kind of a collective call.
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

// The simulator's name (workload/comm_log.h: all_reduce, all_gather, reduce_scatter, all_to_all,
// barrier, send, recv; and broadcast) of a collective PyTorch calls `name` in its records
// ("allreduce", "_allgather_base", "reduce_scatter_tensor_coalesced", "all_to_allv", ...; case is
// ignored); empty when unknown.
std::string_view collective_kind(std::string_view name);

}  // namespace trainsim::measured

#endif  // TRAINSIM_SIM_MEASURED_KERNEL_NAMES_H_
