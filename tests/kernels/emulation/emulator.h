// A CPU emulator of the CUDA features the attention kernels use, so their device code (index
// arithmetic, fragment layouts, masking, pipelining) runs in the CPU test suite. Include it before
// any kernel header: it defines TRAINSIM_KERNELS_EMULATION, which swaps kernels/cuda/ptx.cuh for the
// functions below.
//
// Every thread of a block is a fiber (ucontext) of one OS thread; fibers switch only at
// synchronisation points (__syncthreads, warp collectives), in a seeded permuted round-robin order,
// so runs are deterministic. The instructions follow the PTX ISA's definitions:
//   ldmatrix.x4[.trans], mma.sync m16n8k16 (bf16/fp16 in, fp32 accumulate), cp.async (the copies are
//   performed only at cp.async.wait_group, so a missing wait reads poisoned shared memory), shuffles,
//   and the two wgmma.mma_async forms of kernels/cuda/wgmma.cuh.
// Shared memory is poisoned (0xFF: NaN in bf16, fp16, fp32) at the start of every block, and every
// shared address and cp.async source is checked against the block's shared memory and the
// registered global buffers. A violated check throws EmulationError from launch().
#ifndef TRAINSIM_TESTS_KERNELS_EMULATION_EMULATOR_H_
#define TRAINSIM_TESTS_KERNELS_EMULATION_EMULATOR_H_

#define TRAINSIM_KERNELS_EMULATION 1
#define __host__
#define __device__
#define __global__
#define __launch_bounds__(...)

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace trainsim::kernels::emulation {

class EmulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Declares [data, data + bytes) readable by cp.async (device global memory stands in for it).
void register_global(const void* data, size_t bytes);
void clear_globals();

// Runs `body` (the kernel call) for every block of `grid` with `threads` threads per block and
// `smem_bytes` of dynamic shared memory; `seed` permutes the fiber schedule. Throws EmulationError.
void launch(dim3 grid, int threads, size_t smem_bytes, const std::function<void()>& body, uint32_t seed = 1);

// Used by the built-ins below.
[[noreturn]] void fail(const std::string& message);
void syncthreads();
void warp_exchange(const void* mine, void* all, size_t bytes);  // all[32] after every lane gave mine
int lane_id();
char* shared_memory();
void check_shared(const void* pointer, size_t bytes, const char* what);
void check_global(const void* pointer, size_t bytes, const char* what);
void cp_async(void* shared, const void* global, size_t bytes, bool valid);
void cp_async_commit();
void cp_async_wait(int pending);

}  // namespace trainsim::kernels::emulation

// CUDA built-in variables (of the fiber that runs).
extern uint3 threadIdx;
extern uint3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;

void __syncthreads();
float __shfl_xor_sync(unsigned mask, float value, int lane_mask);
float __shfl_sync(unsigned mask, float value, int source_lane);
float atomicAdd(float* address, float value);
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }

namespace trainsim::kernels::ptx {

void ldmatrix_x4(uint32_t (&r)[4], const void* row);
void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row);
template <typename Element>
void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);
inline void cp_async_16(void* shared, const void* global, bool valid) {
  emulation::cp_async(shared, global, 16, valid);
}
inline void cp_async_4(void* shared, const void* global, bool valid) {
  emulation::cp_async(shared, global, 4, valid);
}
inline void cp_async_commit() { emulation::cp_async_commit(); }
template <int kPending>
void cp_async_wait() {
  emulation::cp_async_wait(kPending);
}
float fast_exp2(float x);
inline char* dynamic_smem() { return emulation::shared_memory(); }
// The offset from the start of the block's shared memory (the emulated shared window starts at 0).
uint32_t shared_address(const void* pointer);

}  // namespace trainsim::kernels::ptx

// wgmma (kernels/cuda/wgmma.cuh): each instruction completes when issued, so fences and waits have
// nothing to order; the operands are read through the same descriptors as on the GPU (128-byte
// swizzle, offsets checked against the block's shared memory).
namespace trainsim::kernels::wgmma {

inline void fence_proxy_async() {}
inline void fence() {}
inline void commit_group() {}
template <int kPending>
void wait_group() {}
template <int kRows, int kCols>
void fence_operands(float (&)[kRows][kCols]) {}
template <typename Element>
void mma_m64n128k16_ss(float (&d)[16][4], uint64_t desc_a, uint64_t desc_b, bool accumulate);
template <typename Element, bool kTransA, bool kTransB>
void mma_m64n64k16_ss(float (&d)[8][4], uint64_t desc_a, uint64_t desc_b, bool accumulate);
template <typename Element>
void mma_m64n64k16_rs_mn_tile(float (&d)[8][4], const uint32_t (&a)[4], uint64_t desc_b);
template <typename Element, int kFirst, int kTiles>
void mma_m64n64k16_rs_mn(float (&d)[kTiles][4], const uint32_t (&a)[4], uint64_t desc_b) {
  static_assert(kFirst >= 0 && kFirst + 8 <= kTiles, "the 64 columns lie inside the accumulator");
  float tile[8][4];
  for (int j = 0; j < 8; ++j) {
    for (int e = 0; e < 4; ++e) tile[j][e] = d[kFirst + j][e];
  }
  mma_m64n64k16_rs_mn_tile<Element>(tile, a, desc_b);
  for (int j = 0; j < 8; ++j) {
    for (int e = 0; e < 4; ++e) d[kFirst + j][e] = tile[j][e];
  }
}

}  // namespace trainsim::kernels::wgmma

#endif  // TRAINSIM_TESTS_KERNELS_EMULATION_EMULATOR_H_
