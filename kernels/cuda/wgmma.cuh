// The Hopper (sm_90a) warpgroup MMA instructions the wgmma attention kernels are built from, and the
// shared-memory matrix descriptors they read (PTX ISA, "Asynchronous Warpgroup Level Matrix
// Multiply-Accumulate", wgmma.mma_async and its matrix descriptor).
//
// Shared-memory operands use the 128-byte swizzle only: a tile is stored as 64-column slabs (64
// 16-bit elements = 128 bytes per row), each slab row-contiguous, and 16-byte chunk c of row r sits
// at chunk c ^ (r % 8). Slabs start on 1024-byte boundaries (the swizzle repeats every 8 rows), so
// the hardware's address XOR (bits 4-6 ^= bits 7-9) and the kernels' stores agree. Two canonical
// layouts are read (CUTLASS cute/atom/mma_traits_sm90_gmma.hpp names them):
//   K-major  (the reduction dimension contiguous): rows of the M or N dimension, 8-row groups
//            `stride` bytes apart; one k16 step stays inside a 128-byte row.
//   MN-major (the M or N dimension contiguous, "transposed"): 64 M or N elements per 128-byte row,
//            rows of the reduction dimension, 8-row groups `stride` bytes apart; the kernels keep
//            that dimension at 64 per instruction, so the offset between 64-element atoms is never
//            used.
// The descriptor's two offsets are both set to the 8-row group stride: whichever of them a layout
// reads, it is right (the other is unused in these layouts).
//
// Accumulator fragment of m64nNk16 (fp32): warp w of the warpgroup holds rows 16w..16w+15; for each
// 8-column chunk j the thread holds d[j][0..3] at (g, 8j+2t), (g, 8j+2t+1), (g+8, 8j+2t),
// (g+8, 8j+2t+1) with g = lane / 4, t = lane % 4 -- the mma.sync m16n8 layout repeated over N. The
// A operand from registers (RS form) has the mma.sync m16n8k16 A layout per warp, so scores held as
// accumulators feed the next product directly (tile.cuh accumulators_to_a).
//
// tests/kernels/emulation supplies the instructions for a plain C++ compiler, decoding the same
// descriptors.
#ifndef TRAINSIM_KERNELS_CUDA_WGMMA_CUH_
#define TRAINSIM_KERNELS_CUDA_WGMMA_CUH_

#include <cstdint>
#include <type_traits>
#include <utility>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace trainsim::kernels::wgmma {

constexpr int kSwizzleBytes = 128;                         // one row of a slab
constexpr int kSwizzleRows = 8;                            // rows after which the pattern repeats
constexpr int kGroupBytes = kSwizzleBytes * kSwizzleRows;  // 1024: slab alignment, 8-row stride
constexpr uint64_t kSwizzle128Mode = 1;                    // descriptor bits 62-63

// Descriptor of a 128-byte-swizzled operand starting at shared address `address` (16-byte aligned,
// inside a 1024-byte-aligned slab), 8-row groups `group_stride_bytes` apart.
__host__ __device__ constexpr uint64_t make_descriptor(uint32_t address, uint32_t group_stride_bytes) {
  const uint64_t start = (address >> 4) & 0x3FFFU;
  const uint64_t offset = (group_stride_bytes >> 4) & 0x3FFFU;
  return start | (offset << 16) | (offset << 32) | (kSwizzle128Mode << 62);
}

// Byte offset, inside a slab that starts 1024-byte aligned, of 16-byte chunk `chunk` (0..7) of
// row `row`.
__host__ __device__ constexpr uint32_t swizzled_offset(int row, int chunk) {
  return static_cast<uint32_t>(row * kSwizzleBytes + ((chunk ^ (row % kSwizzleRows)) << 4));
}

// Calls f(std::integral_constant<int, i>{}) for i = 0..kCount-1: a loop whose index can be a
// template argument (the accumulator slab of an instruction).
template <typename F, int... kIndex>
__host__ __device__ __forceinline__ void static_for(F& f, std::integer_sequence<int, kIndex...> /*indices*/) {
  (f(std::integral_constant<int, kIndex>{}), ...);
}

template <int kCount, typename F>
__host__ __device__ __forceinline__ void static_for(F&& f) {
  static_for(f, std::make_integer_sequence<int, kCount>{});
}

}  // namespace trainsim::kernels::wgmma

#ifndef TRAINSIM_KERNELS_EMULATION

namespace trainsim::kernels::wgmma {

// Makes this thread's generic-proxy shared-memory writes (stores, cp.async) visible to wgmma.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Orders register writes (accumulators, A fragments) before the next wgmma.mma_async.
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

__device__ __forceinline__ void commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most kPending committed groups of this warpgroup are still running.
template <int kPending>
__device__ __forceinline__ void wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving accesses of an accumulator across the asynchronous MMA.
template <int kRows, int kCols>
__device__ __forceinline__ void fence_operands(float (&d)[kRows][kCols]) {
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
      asm volatile("" : "+f"(d[i][j])::"memory");
    }
  }
}

#define TRAINSIM_WGMMA_D4(d, j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])

// d (64 x 128) = a (64 x 16, K-major descriptor) · b (16 x 128, K-major descriptor) (+ d when
// `accumulate`).
template <typename Element>
__device__ __forceinline__ void mma_m64n128k16_ss(float (&d)[16][4], uint64_t desc_a, uint64_t desc_b,
                                                  bool accumulate);

#define TRAINSIM_WGMMA_SS_N128(TYPE)                                                                         \
  asm volatile(                                                                                              \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                           \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE                                           \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "    \
      "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, " \
      "%41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, " \
      "%61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"                                                        \
      : TRAINSIM_WGMMA_D4(d, 0), TRAINSIM_WGMMA_D4(d, 1), TRAINSIM_WGMMA_D4(d, 2), TRAINSIM_WGMMA_D4(d, 3),  \
        TRAINSIM_WGMMA_D4(d, 4), TRAINSIM_WGMMA_D4(d, 5), TRAINSIM_WGMMA_D4(d, 6), TRAINSIM_WGMMA_D4(d, 7),  \
        TRAINSIM_WGMMA_D4(d, 8), TRAINSIM_WGMMA_D4(d, 9), TRAINSIM_WGMMA_D4(d, 10),                          \
        TRAINSIM_WGMMA_D4(d, 11), TRAINSIM_WGMMA_D4(d, 12), TRAINSIM_WGMMA_D4(d, 13),                        \
        TRAINSIM_WGMMA_D4(d, 14), TRAINSIM_WGMMA_D4(d, 15)                                                   \
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)))

template <>
__device__ __forceinline__ void mma_m64n128k16_ss<__nv_bfloat16>(float (&d)[16][4], uint64_t desc_a,
                                                                 uint64_t desc_b, bool accumulate) {
  TRAINSIM_WGMMA_SS_N128("bf16");
}

template <>
__device__ __forceinline__ void mma_m64n128k16_ss<__half>(float (&d)[16][4], uint64_t desc_a, uint64_t desc_b,
                                                          bool accumulate) {
  TRAINSIM_WGMMA_SS_N128("f16");
}

// d (64 x 64) = a (64 x 16) · b (16 x 64) (+ d when `accumulate`), both from shared memory: a
// K-major, or MN-major with kTransA; b K-major, or MN-major with kTransB.
template <typename Element, bool kTransA, bool kTransB>
__device__ __forceinline__ void mma_m64n64k16_ss(float (&d)[8][4], uint64_t desc_a, uint64_t desc_b,
                                                 bool accumulate);

#define TRAINSIM_WGMMA_SS_N64(TYPE)                                                                         \
  asm volatile(                                                                                             \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                          \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE                                           \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "   \
      "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, %35, %36;\n}\n"           \
      : TRAINSIM_WGMMA_D4(d, 0), TRAINSIM_WGMMA_D4(d, 1), TRAINSIM_WGMMA_D4(d, 2), TRAINSIM_WGMMA_D4(d, 3), \
        TRAINSIM_WGMMA_D4(d, 4), TRAINSIM_WGMMA_D4(d, 5), TRAINSIM_WGMMA_D4(d, 6), TRAINSIM_WGMMA_D4(d, 7)  \
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)), "n"(static_cast<int>(kTransA)),        \
        "n"(static_cast<int>(kTransB)))

template <typename Element, bool kTransA, bool kTransB>
__device__ __forceinline__ void mma_m64n64k16_ss(float (&d)[8][4], uint64_t desc_a, uint64_t desc_b,
                                                 bool accumulate) {
  if constexpr (std::is_same_v<Element, __nv_bfloat16>) {
    TRAINSIM_WGMMA_SS_N64("bf16");
  } else {
    TRAINSIM_WGMMA_SS_N64("f16");
  }
}

// d[kFirst..kFirst+7] (64 x 64 of a wider accumulator) += a (64 x 16, registers) · b (16 x 64,
// MN-major descriptor).
#define TRAINSIM_WGMMA_RS_N64_MN(TYPE)                                                                       \
  asm volatile(                                                                                              \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                                           \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE                                            \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "    \
      "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"  \
      : TRAINSIM_WGMMA_D4(d, kFirst), TRAINSIM_WGMMA_D4(d, kFirst + 1), TRAINSIM_WGMMA_D4(d, kFirst + 2),    \
        TRAINSIM_WGMMA_D4(d, kFirst + 3), TRAINSIM_WGMMA_D4(d, kFirst + 4),                                  \
        TRAINSIM_WGMMA_D4(d, kFirst + 5), TRAINSIM_WGMMA_D4(d, kFirst + 6), TRAINSIM_WGMMA_D4(d, kFirst + 7) \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1))

template <typename Element, int kFirst, int kTiles>
__device__ __forceinline__ void mma_m64n64k16_rs_mn(float (&d)[kTiles][4], const uint32_t (&a)[4],
                                                    uint64_t desc_b) {
  static_assert(kFirst >= 0 && kFirst + 8 <= kTiles, "the 64 columns lie inside the accumulator");
  if constexpr (std::is_same_v<Element, __nv_bfloat16>) {
    TRAINSIM_WGMMA_RS_N64_MN("bf16");
  } else {
    TRAINSIM_WGMMA_RS_N64_MN("f16");
  }
}

#undef TRAINSIM_WGMMA_SS_N128
#undef TRAINSIM_WGMMA_SS_N64
#undef TRAINSIM_WGMMA_RS_N64_MN
#undef TRAINSIM_WGMMA_D4

}  // namespace trainsim::kernels::wgmma

#endif  // TRAINSIM_KERNELS_EMULATION

#endif  // TRAINSIM_KERNELS_CUDA_WGMMA_CUH_
