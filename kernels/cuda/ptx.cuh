// The few PTX instructions the attention kernels are built from (sm_80 and later, also run on
// sm_90): ldmatrix, mma.sync m16n8k16 with fp32 accumulation, cp.async and ex2.approx.
//
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k16"), with g = lane / 4 and
// t = lane % 4; each 32-bit register holds two consecutive elements of a row, lower column first:
//   A 16x16 (row-major, m x k): a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
//   B 16x8  (k x n, "col"):     b0 (k = 2t..2t+1, n = g)  b1 (k = 2t+8.., n = g)
//   C/D 16x8 fp32:              c0,c1 (g, 2t..2t+1)  c2,c3 (g+8, 2t..2t+1)
// ldmatrix.x4 loads four 8x8 matrices of 16-bit elements; lanes 8i..8i+7 give the addresses of the
// eight 16-byte rows of matrix i, and register i of lane l receives row l/4, elements 2(l%4) and
// 2(l%4)+1 of matrix i (with .trans: column l/4, rows 2(l%4) and 2(l%4)+1).
//
// tests/kernels/emulation supplies the same functions for a plain C++ compiler (it defines
// TRAINSIM_KERNELS_EMULATION), so the kernels' index arithmetic runs in the CPU test suite.
#ifndef TRAINSIM_KERNELS_CUDA_PTX_CUH_
#define TRAINSIM_KERNELS_CUDA_PTX_CUH_

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef TRAINSIM_KERNELS_EMULATION

namespace trainsim::kernels::ptx {

__device__ __forceinline__ uint32_t shared_address(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// Four 8x8 matrices; `row` is this lane's row address (16 bytes, 16-byte aligned, shared memory).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row)));
}

// d += a·b for one 16x8x16 tile, fp32 accumulation.
template <typename Element>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);

template <>
__device__ __forceinline__ void mma_m16n8k16<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4],
                                                            const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <>
__device__ __forceinline__ void mma_m16n8k16<__half>(float (&d)[4], const uint32_t (&a)[4],
                                                     const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Asynchronous 16-byte global -> shared copy (L2 only); writes zeros instead when !valid (the
// global address is then not read but must still be a valid pointer).
__device__ __forceinline__ void cp_async_16(void* shared, const void* global, bool valid) {
  const int source_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared)), "l"(global),
               "r"(source_bytes));
}

// Asynchronous 4-byte global -> shared copy (through L1); writes a zero instead when !valid.
__device__ __forceinline__ void cp_async_4(void* shared, const void* global, bool valid) {
  const int source_bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(shared)), "l"(global),
               "r"(source_bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most `kPending` of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// 2^x, approximate (2 ulp), flushing denormals; 2^-inf = 0.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// The block's dynamic shared memory (16-byte aligned).
__device__ __forceinline__ char* dynamic_smem() {
  extern __shared__ __align__(16) char smem[];
  return smem;
}

}  // namespace trainsim::kernels::ptx

#endif  // TRAINSIM_KERNELS_EMULATION

#endif  // TRAINSIM_KERNELS_CUDA_PTX_CUH_
