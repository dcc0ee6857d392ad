// PinnedBuffer<T>: owner of page-locked host memory (cudaMallocHost), the only host memory that
// copies overlap with kernels from. Move-only, freed on destruction.
#ifndef TRAINSIM_KERNELS_CUDA_PINNED_BUFFER_H_
#define TRAINSIM_KERNELS_CUDA_PINNED_BUFFER_H_

#include "kernels/cuda/allocation.h"

namespace trainsim::kernels {

template <typename T>
using PinnedBuffer = Allocation<T, PinnedMemory>;

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_CUDA_PINNED_BUFFER_H_
