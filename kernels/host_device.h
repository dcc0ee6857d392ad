// TRAINSIM_HOST_DEVICE marks the few inline functions shared by the CPU references and the CUDA
// kernels (so both compute the same formula); it is empty for a plain C++ compiler.
#ifndef TRAINSIM_KERNELS_HOST_DEVICE_H_
#define TRAINSIM_KERNELS_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define TRAINSIM_HOST_DEVICE __host__ __device__
#else
#define TRAINSIM_HOST_DEVICE
#endif

#endif  // TRAINSIM_KERNELS_HOST_DEVICE_H_
