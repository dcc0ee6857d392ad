// Forward attention kernel for Hopper (sm_90a) with warpgroup MMAs (kernels/cuda/wgmma.cuh): the
// algorithm of attention_fwd_kernel.cuh (online softmax over key tiles, no q_len x kv_len matrix),
// with the two products issued as wgmma.mma_async over whole tiles instead of mma.sync per 16x8.
// One thread block = two warpgroups = 128 query rows (64 per warpgroup); 128 keys per tile.
//   S = Q·Kᵀ: m64n128k16 per 16 head_dim columns, Q and K read from shared memory (K-major).
//   O += P·V: P stays in registers (the score accumulators, packed to 16 bits), V read from shared
//             memory (MN-major), m64n64k16 per 16 keys and 64 output columns.
// K/V tiles are double-buffered with cp.async one tile ahead, as in the sm_80 kernel. Not yet the
// FlashAttention-3 pipeline (TMA, producer warpgroup, softmax overlapped with the next product).
#ifndef TRAINSIM_KERNELS_ATTENTION_ATTENTION_FWD_WGMMA_KERNEL_CUH_
#define TRAINSIM_KERNELS_ATTENTION_ATTENTION_FWD_WGMMA_KERNEL_CUH_

#include <cmath>
#include <cstdint>

#include "kernels/attention/attention_fwd_kernel.cuh"
#include "kernels/attention/attention_params.h"
#include "kernels/attention/tile.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace trainsim::kernels::attention_impl {

template <int kHeadDim_>
struct WgmmaFwdTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = 128;  // query rows per block, 64 per warpgroup
  static constexpr int kBlockN = 128;  // keys per tile
  static constexpr int kWarpgroups = 2;
  static constexpr int kThreads = 128 * kWarpgroups;
  static constexpr int kSlabs = kHeadDim / 64;  // 64-column swizzle slabs per row
  static constexpr int kQBytes = kBlockM * kHeadDim * 2;
  static constexpr int kKvBytes = kBlockN * kHeadDim * 2;
  // Q, K[2], V[2], and room to align the first tile to 1024 bytes.
  static constexpr int kSmemBytes = kQBytes + 4 * kKvBytes + wgmma::kGroupBytes;
  static_assert(kHeadDim % 64 == 0, "head_dim must be a multiple of the 64-column swizzle slab");
};

template <typename Element, typename Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1)
    attention_fwd_wgmma_kernel(const AttentionFwdParams params) {
  constexpr int kHeadDim = Traits::kHeadDim;
  constexpr int kBlockM = Traits::kBlockM;
  constexpr int kBlockN = Traits::kBlockN;
  constexpr int kThreads = Traits::kThreads;
  constexpr int kRow = wgmma::kSwizzleBytes;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warpgroup = tid >> 7;
  const int warp_row0 = warpgroup * 64 + ((tid >> 5) & 3) * 16;  // first of this warp's 16 rows
  const FwdBlock<Element> block = fwd_block<Element, kBlockM>(params);

  // Tiles start 1024-byte aligned in the shared window (the swizzle pattern's period).
  char* smem = ptx::dynamic_smem();
  smem += (wgmma::kGroupBytes - (ptx::shared_address(smem) % wgmma::kGroupBytes)) % wgmma::kGroupBytes;
  char* s_q = smem;
  char* s_k = s_q + Traits::kQBytes;
  char* s_v = s_k + 2 * Traits::kKvBytes;
  const uint32_t q_address = ptx::shared_address(s_q);
  const uint32_t k_address = ptx::shared_address(s_k);
  const uint32_t v_address = ptx::shared_address(s_v);

  // Starts the loads of key/value tile `tile` into `stage`.
  auto load_kv = [&](int tile, int stage) {
    const int n_start = tile * kBlockN;
    const int valid = min(kBlockN, params.kv_len - n_start);
    load_swizzled_async<kBlockN, kHeadDim, kThreads>(
        s_k + stage * Traits::kKvBytes, block.k + static_cast<int64_t>(n_start) * params.k_strides.row,
        params.k_strides.row, valid, tid);
    load_swizzled_async<kBlockN, kHeadDim, kThreads>(
        s_v + stage * Traits::kKvBytes, block.v + static_cast<int64_t>(n_start) * params.v_strides.row,
        params.v_strides.row, valid, tid);
  };

  const int n_tiles = block.kv_end > 0 ? ceil_div(block.kv_end, kBlockN) : 0;
  if (n_tiles > 0) {
    load_swizzled_async<kBlockM, kHeadDim, kThreads>(s_q, block.q, params.q_strides.row, block.q_rows, tid);
    load_kv(0, 0);
  }
  ptx::cp_async_commit();

  float o[kHeadDim / 8][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {};
  const float scale_log2 = params.softmax_scale * kLog2e;

  for (int tile = 0; tile < n_tiles; ++tile) {
    const int stage = tile & 1;
    const int n_start = tile * kBlockN;
    load_next_and_wait(tile, n_tiles, load_kv);
    wgmma::fence_proxy_async();
    __syncthreads();
    const uint32_t tile_k = k_address + stage * Traits::kKvBytes;
    const uint32_t tile_v = v_address + stage * Traits::kKvBytes;

    // S = Q·Kᵀ for this warpgroup's 64 rows: 16 head_dim columns per instruction, 4 per slab.
    float s[kBlockN / 8][4] = {};
    wgmma::fence_operands(s);
    wgmma::fence();
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 16; ++ks) {
      const uint32_t column = (ks % 4) * 32;  // bytes into the slab row
      const uint64_t desc_q = wgmma::make_descriptor(
          q_address + (ks / 4) * (kBlockM * kRow) + warpgroup * 64 * kRow + column, wgmma::kGroupBytes);
      const uint64_t desc_k =
          wgmma::make_descriptor(tile_k + (ks / 4) * (kBlockN * kRow) + column, wgmma::kGroupBytes);
      wgmma::mma_m64n128k16_ss<Element>(s, desc_q, desc_k, ks > 0);
    }
    wgmma::commit_group();
    wgmma::wait_group<0>();
    wgmma::fence_operands(s);

    // Mask keys past kv_len and, for causal blocks, keys after the row's diagonal; online softmax.
    if (tile_needs_mask<kBlockN>(block, params, n_start)) {
      mask_scores(s, params, block.shift, block.q_start + warp_row0, n_start, lane);
    }
    online_softmax(s, o, row_max, row_sum, scale_log2);

    // O += P·V: 16 keys per instruction (the score chunks 2kk, 2kk+1 as the A operand), one
    // instruction per 64-column slab of V.
    uint32_t p[kBlockN / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      accumulators_to_a<Element>(p[kk], s, kk);
    }
    wgmma::fence_operands(o);
    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      wgmma::static_for<Traits::kSlabs>([&](auto slab) {
        constexpr int kSlab = decltype(slab)::value;
        const uint64_t desc_v =
            wgmma::make_descriptor(tile_v + kSlab * (kBlockN * kRow) + kk * 16 * kRow, wgmma::kGroupBytes);
        wgmma::mma_m64n64k16_rs_mn<Element, kSlab * 8>(o, p[kk], desc_v);
      });
    }
    wgmma::commit_group();
    wgmma::wait_group<0>();
    wgmma::fence_operands(o);
    __syncthreads();  // both warpgroups are done with this stage before it is refilled
  }

  store_output(block, params, o, row_max, row_sum, warp_row0, lane);
}

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_FWD_WGMMA_KERNEL_CUH_
