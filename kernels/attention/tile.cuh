// Shared-memory tiles of the attention kernels and the fragment loads between them and mma.sync
// (see kernels/cuda/ptx.cuh for the fragment layouts); the swizzled slab loads of the wgmma kernels;
// the step of their double-buffered cp.async loop.
#ifndef TRAINSIM_KERNELS_ATTENTION_TILE_CUH_
#define TRAINSIM_KERNELS_ATTENTION_TILE_CUH_

#include <cstdint>

#include "kernels/cuda/element.cuh"
#include "kernels/cuda/ptx.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace trainsim::kernels::attention_impl {

constexpr float kLog2e = 1.4426950408889634F;

// A [kRows][kCols] tile of 16-bit elements, stored as 16-byte chunks of 8 elements whose chunk
// index is XORed with the row (mod 8): the eight rows one ldmatrix reads at the same logical chunk
// land in eight different bank groups, and 16-byte cp.async writes stay aligned.
template <int kRows_, int kCols_>
struct SmemTile {
  static constexpr int kRows = kRows_;
  static constexpr int kCols = kCols_;
  static constexpr int kChunks = kCols / 8;
  static constexpr int kSwizzleMask = (kChunks < 8 ? kChunks : 8) - 1;
  static constexpr int kElements = kRows * kCols;
  static constexpr int kBytes = kElements * 2;
  static_assert(kCols % 8 == 0 && (kChunks & (kChunks - 1)) == 0, "columns must be 8 times a power of two");

  // Element offset of the start of logical chunk `chunk` of row `row`.
  __device__ __forceinline__ static int offset(int row, int chunk) {
    return row * kCols + ((chunk ^ (row & kSwizzleMask)) << 3);
  }
};

// Starts the copy of rows [0, Tile::kRows) of a global slab (first row at `global`, rows `stride`
// elements apart) into `tile`; rows at or past `valid_rows` become zeros. `global` must point at a
// valid row. All kThreads threads of the block call it with their own `tid`.
template <typename Tile, int kThreads, typename Element>
__device__ __forceinline__ void load_tile_async(Element* tile, const Element* global, int64_t stride,
                                                int valid_rows, int tid) {
  constexpr int kTotal = Tile::kRows * Tile::kChunks;
  static_assert(kTotal % kThreads == 0, "the tile must split evenly over the threads");
#pragma unroll
  for (int c = tid; c < kTotal; c += kThreads) {
    const int row = c / Tile::kChunks;
    const int chunk = c % Tile::kChunks;
    const bool valid = row < valid_rows;
    ptx::cp_async_16(tile + Tile::offset(row, chunk), global + (valid ? row : 0) * stride + chunk * 8, valid);
  }
}

// Starts the copy of rows [0, kRows) of a global [rows][kHeadDim] slab (rows `stride` elements
// apart) into the 128-byte-swizzled 64-column slabs that wgmma reads (kernels/cuda/wgmma.cuh), the
// slabs one after another at shared `tile`; rows at or past `valid_rows` become zeros.
template <int kRows, int kHeadDim, int kThreads, typename Element>
__device__ __forceinline__ void load_swizzled_async(char* tile, const Element* global, int64_t stride,
                                                    int valid_rows, int tid) {
  constexpr int kChunks = kHeadDim / 8;  // 16-byte chunks per row
  constexpr int kTotal = kRows * kChunks;
  static_assert(kTotal % kThreads == 0, "the tile must split evenly over the threads");
#pragma unroll
  for (int c = tid; c < kTotal; c += kThreads) {
    const int row = c / kChunks;
    const int chunk = c % kChunks;
    const bool valid = row < valid_rows;
    char* slab = tile + (chunk / 8) * (kRows * wgmma::kSwizzleBytes);
    ptx::cp_async_16(slab + wgmma::swizzled_offset(row, chunk % 8),
                     global + (valid ? row : 0) * stride + chunk * 8, valid);
  }
}

// Starts the copy of `count` consecutive floats (count <= kThreads) into `shared`, zeros past `valid`.
template <int kThreads>
__device__ __forceinline__ void load_floats_async(float* shared, const float* global, int count, int valid,
                                                  int tid) {
  if (tid < count) {
    const bool in_range = tid < valid;
    ptx::cp_async_4(shared + tid, global + (in_range ? tid : 0), in_range);
  }
}

// Step t of a loop over `count` items whose cp.async loads run one item ahead in two shared-memory
// stages (item t in stage t & 1; the loads of item 0 started and committed before the loop): starts
// the loads of item t + 1, if any, into the other stage with `load_item(t + 1, stage)`, then waits
// for this thread's copies of item t. The block must still synchronize before it reads item t.
template <typename LoadItem>
__device__ __forceinline__ void load_next_and_wait(int t, int count, const LoadItem& load_item) {
  if (t + 1 < count) {
    load_item(t + 1, (t & 1) ^ 1);
  }
  ptx::cp_async_commit();
  ptx::cp_async_wait<1>();
}

// A operand (16x16 at rows m0.., columns k0..) of a row-major [m][k] tile.
template <typename Tile, typename Element>
__device__ __forceinline__ void load_a(uint32_t (&a)[4], const Element* tile, int m0, int k0, int lane) {
  ptx::ldmatrix_x4(a, tile + Tile::offset(m0 + (lane & 15), (k0 >> 3) + (lane >> 4)));
}

// A operand (m0.., k0..) of a tile stored k-major, [k][m] (transposing load).
template <typename Tile, typename Element>
__device__ __forceinline__ void load_a_trans(uint32_t (&a)[4], const Element* tile, int m0, int k0,
                                             int lane) {
  ptx::ldmatrix_x4_trans(
      a, tile + Tile::offset(k0 + (lane & 7) + ((lane >> 4) << 3), (m0 >> 3) + ((lane >> 3) & 1)));
}

// B operands of the n-tiles n0 (b[0]) and n0 + 8 (b[1]) over k0..k0+15, from a tile stored [n][k].
template <typename Tile, typename Element>
__device__ __forceinline__ void load_b_pair(uint32_t (&b)[2][2], const Element* tile, int n0, int k0,
                                            int lane) {
  uint32_t r[4];
  ptx::ldmatrix_x4(r,
                   tile + Tile::offset(n0 + (lane & 7) + ((lane >> 4) << 3), (k0 >> 3) + ((lane >> 3) & 1)));
  b[0][0] = r[0];
  b[0][1] = r[1];
  b[1][0] = r[2];
  b[1][1] = r[3];
}

// B operands of the n-tiles n0 (b[0]) and n0 + 8 (b[1]) over k0..k0+15, from a tile stored [k][n]
// (transposing load).
template <typename Tile, typename Element>
__device__ __forceinline__ void load_b_pair_trans(uint32_t (&b)[2][2], const Element* tile, int k0, int n0,
                                                  int lane) {
  uint32_t r[4];
  ptx::ldmatrix_x4_trans(
      r, tile + Tile::offset(k0 + (lane & 7) + (((lane >> 3) & 1) << 3), (n0 >> 3) + (lane >> 4)));
  b[0][0] = r[0];
  b[0][1] = r[1];
  b[1][0] = r[2];
  b[1][1] = r[3];
}

// The A operand for k-step kk of a product whose left factor is held as mma accumulators: columns
// 16kk..16kk+15 are the accumulator n-tiles 2kk and 2kk+1 (the flash-attention register reuse).
template <typename Element, int kNTiles>
__device__ __forceinline__ void accumulators_to_a(uint32_t (&a)[4], const float (&acc)[kNTiles][4], int kk) {
  using Traits = ElementTraits<Element>;
  a[0] = Traits::pack(acc[2 * kk][0], acc[2 * kk][1]);
  a[1] = Traits::pack(acc[2 * kk][2], acc[2 * kk][3]);
  a[2] = Traits::pack(acc[2 * kk + 1][0], acc[2 * kk + 1][1]);
  a[3] = Traits::pack(acc[2 * kk + 1][2], acc[2 * kk + 1][3]);
}

// Warp products of the backward kernel, each over the 16 rows this warp owns.
// acc += A·Bᵀ from shared memory: A the rows a_row0..a_row0+15 of `a_tile`, B the first kNTiles·8 rows
// of `b_tile`, both over their first kK columns (Sᵀ = K·Qᵀ, dPᵀ = V·dOᵀ).
template <typename ATile, typename BTile, int kK, typename Element, int kNTiles>
__device__ __forceinline__ void warp_mma_abt(float (&acc)[kNTiles][4], const Element* a_tile, int a_row0,
                                             const Element* b_tile, int lane) {
#pragma unroll
  for (int ks = 0; ks < kK / 16; ++ks) {
    uint32_t a[4];
    load_a<ATile>(a, a_tile, a_row0, ks * 16, lane);
#pragma unroll
    for (int np = 0; np < kNTiles / 2; ++np) {
      uint32_t b[2][2];
      load_b_pair<BTile>(b, b_tile, np * 16, ks * 16, lane);
      ptx::mma_m16n8k16<Element>(acc[2 * np], a, b[0]);
      ptx::mma_m16n8k16<Element>(acc[2 * np + 1], a, b[1]);
    }
  }
}

// acc += P·B with the left factor in registers: P this warp's accumulators (16 x kKTiles·8, the A
// operand through accumulators_to_a), B the first kKTiles·8 rows and kNTiles·8 columns of `b_tile`
// (dV += Pᵀ·dO, dK += dSᵀ·Q).
template <typename BTile, typename Element, int kKTiles, int kNTiles>
__device__ __forceinline__ void warp_mma_pb(float (&acc)[kNTiles][4], const float (&p)[kKTiles][4],
                                            const Element* b_tile, int lane) {
#pragma unroll
  for (int kk = 0; kk < kKTiles / 2; ++kk) {
    uint32_t a[4];
    accumulators_to_a<Element>(a, p, kk);
#pragma unroll
    for (int dp = 0; dp < kNTiles / 2; ++dp) {
      uint32_t b[2][2];
      load_b_pair_trans<BTile>(b, b_tile, kk * 16, dp * 16, lane);
      ptx::mma_m16n8k16<Element>(acc[2 * dp], a, b[0]);
      ptx::mma_m16n8k16<Element>(acc[2 * dp + 1], a, b[1]);
    }
  }
}

// Row (0..15) and column (0..7) inside its 16x8 tile of accumulator element e (0..3) of `lane`.
__device__ __forceinline__ int accumulator_row(int lane, int e) { return (lane >> 2) + ((e >> 1) << 3); }
__device__ __forceinline__ int accumulator_col(int lane, int e) { return ((lane & 3) << 1) + (e & 1); }

// Sum or max over the four lanes that hold one accumulator row.
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffU, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffU, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffU, x, 1);
  return x + __shfl_xor_sync(0xffffffffU, x, 2);
}

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_TILE_CUH_
