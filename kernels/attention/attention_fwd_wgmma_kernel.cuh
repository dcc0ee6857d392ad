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
  constexpr int kSlabs = Traits::kSlabs;
  constexpr int kNTiles = kBlockN / 8;  // 8-column score chunks

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warpgroup = tid >> 7;
  const int warp_row0 = warpgroup * 64 + ((tid >> 5) & 3) * 16;  // first of this warp's 16 rows
  const int head = static_cast<int>(blockIdx.y);
  const int batch = static_cast<int>(blockIdx.z);
  const int kv_head = head / (params.heads / params.kv_heads);
  const int q_start = static_cast<int>(blockIdx.x) * kBlockM;
  const int q_rows = min(kBlockM, params.q_len - q_start);
  const int shift = params.kv_len - params.q_len;  // bottom-right causal alignment: key j <= row i + shift
  const int kv_end = params.causal ? min(params.kv_len, q_start + kBlockM + shift) : params.kv_len;

  const Element* q = static_cast<const Element*>(params.q) + batch * params.q_strides.batch +
                     static_cast<int64_t>(q_start) * params.q_strides.row + head * params.q_strides.head;
  const Element* k = static_cast<const Element*>(params.k) + batch * params.k_strides.batch +
                     kv_head * params.k_strides.head;
  const Element* v = static_cast<const Element*>(params.v) + batch * params.v_strides.batch +
                     kv_head * params.v_strides.head;
  Element* out = static_cast<Element*>(params.out) + batch * params.out_strides.batch +
                 static_cast<int64_t>(q_start) * params.out_strides.row + head * params.out_strides.head;
  float* lse = params.lse + (static_cast<int64_t>(batch) * params.heads + head) * params.q_len + q_start;

  // Tiles start 1024-byte aligned in the shared window (the swizzle pattern's period).
  char* smem = ptx::dynamic_smem();
  smem += (wgmma::kGroupBytes - (ptx::shared_address(smem) % wgmma::kGroupBytes)) % wgmma::kGroupBytes;
  char* s_q = smem;
  char* s_k = s_q + Traits::kQBytes;
  char* s_v = s_k + 2 * Traits::kKvBytes;
  const uint32_t q_address = ptx::shared_address(s_q);
  const uint32_t k_address = ptx::shared_address(s_k);
  const uint32_t v_address = ptx::shared_address(s_v);

  const int n_tiles = kv_end > 0 ? ceil_div(kv_end, kBlockN) : 0;
  if (n_tiles > 0) {
    load_swizzled_async<kBlockM, kHeadDim, kThreads>(s_q, q, params.q_strides.row, q_rows, tid);
    load_swizzled_async<kBlockN, kHeadDim, kThreads>(s_k, k, params.k_strides.row,
                                                     min(kBlockN, params.kv_len), tid);
    load_swizzled_async<kBlockN, kHeadDim, kThreads>(s_v, v, params.v_strides.row,
                                                     min(kBlockN, params.kv_len), tid);
  }
  ptx::cp_async_commit();

  float o[kSlabs][8][4] = {};  // output columns 64·slab + 8j + ...
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {};
  const float scale_log2 = params.softmax_scale * kLog2e;

  for (int tile = 0; tile < n_tiles; ++tile) {
    const int stage = tile & 1;
    const int n_start = tile * kBlockN;
    if (tile + 1 < n_tiles) {
      const int next_start = n_start + kBlockN;
      const int valid = min(kBlockN, params.kv_len - next_start);
      load_swizzled_async<kBlockN, kHeadDim, kThreads>(
          s_k + (stage ^ 1) * Traits::kKvBytes, k + static_cast<int64_t>(next_start) * params.k_strides.row,
          params.k_strides.row, valid, tid);
      load_swizzled_async<kBlockN, kHeadDim, kThreads>(
          s_v + (stage ^ 1) * Traits::kKvBytes, v + static_cast<int64_t>(next_start) * params.v_strides.row,
          params.v_strides.row, valid, tid);
    }
    ptx::cp_async_commit();
    ptx::cp_async_wait<1>();
    wgmma::fence_proxy_async();
    __syncthreads();
    const uint32_t tile_k = k_address + stage * Traits::kKvBytes;
    const uint32_t tile_v = v_address + stage * Traits::kKvBytes;

    // S = Q·Kᵀ for this warpgroup's 64 rows: 16 head_dim columns per instruction, 4 per slab.
    float s[kNTiles][4] = {};
    wgmma::fence_operands(s);
    wgmma::fence();
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 16; ++ks) {
      const uint32_t column = (ks % 4) * 32;  // bytes into the slab row
      const uint64_t desc_q = wgmma::make_descriptor(q_address + (ks / 4) * (kBlockM * wgmma::kSwizzleBytes) +
                                                         warpgroup * 64 * wgmma::kSwizzleBytes + column,
                                                     wgmma::kGroupBytes);
      const uint64_t desc_k = wgmma::make_descriptor(
          tile_k + (ks / 4) * (kBlockN * wgmma::kSwizzleBytes) + column, wgmma::kGroupBytes);
      wgmma::mma_m64n128k16_ss<Element>(s, desc_q, desc_k, ks > 0);
    }
    wgmma::commit_group();
    wgmma::wait_group<0>();
    wgmma::fence_operands(s);

    // Mask keys past kv_len and, for causal blocks, keys after the row's diagonal.
    const bool needs_mask =
        n_start + kBlockN > params.kv_len || (params.causal && n_start + kBlockN - 1 > q_start + shift);
    if (needs_mask) {
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = q_start + warp_row0 + accumulator_row(lane, e);
          const int col = n_start + nt * 8 + accumulator_col(lane, e);
          if (col >= params.kv_len || (params.causal && col > row + shift)) {
            s[nt][e] = -INFINITY;
          }
        }
      }
    }

    // Online softmax: new running max, rescale the running sum and output, P = exp(S - max).
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float m = row_max[half];
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
        m = fmaxf(m, fmaxf(s[nt][2 * half], s[nt][2 * half + 1]));
      }
      m = quad_max(m);
      // A row that has seen no key yet keeps max = -inf; subtracting 0 then gives P = 0, not NaN.
      const float m_scaled = m == -INFINITY ? 0.0F : m * scale_log2;
      const float rescale = ptx::fast_exp2(row_max[half] * scale_log2 - m_scaled);
      row_max[half] = m;
      float sum = row_sum[half] * rescale;
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
#pragma unroll
        for (int dt = 0; dt < 8; ++dt) {
          o[slab][dt][2 * half] *= rescale;
          o[slab][dt][2 * half + 1] *= rescale;
        }
      }
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
        for (int e = 2 * half; e < 2 * half + 2; ++e) {
          const float p = ptx::fast_exp2(s[nt][e] * scale_log2 - m_scaled);
          s[nt][e] = p;
          sum += p;
        }
      }
      row_sum[half] = sum;
    }

    // O += P·V: 16 keys per instruction (the score chunks 2kk, 2kk+1 as the A operand), one
    // instruction per 64-column slab of V.
    uint32_t p[kBlockN / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      accumulators_to_a<Element>(p[kk], s, kk);
    }
#pragma unroll
    for (int slab = 0; slab < kSlabs; ++slab) {
      wgmma::fence_operands(o[slab]);
    }
    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        const uint64_t desc_v = wgmma::make_descriptor(
            tile_v + slab * (kBlockN * wgmma::kSwizzleBytes) + kk * 16 * wgmma::kSwizzleBytes,
            wgmma::kGroupBytes);
        wgmma::mma_m64n64k16_rs_mn<Element>(o[slab], p[kk], desc_v);
      }
    }
    wgmma::commit_group();
    wgmma::wait_group<0>();
#pragma unroll
    for (int slab = 0; slab < kSlabs; ++slab) {
      wgmma::fence_operands(o[slab]);
    }
    __syncthreads();  // both warpgroups are done with this stage before it is refilled
  }

  // out = O / sum, lse = max·scale + log(sum); a row that saw no key gets 0 and -inf.
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const float sum = quad_sum(row_sum[half]);
    const float inv_sum = sum > 0.0F ? 1.0F / sum : 0.0F;
    const int row = warp_row0 + (lane >> 2) + half * 8;
    if (row < q_rows) {
      Element* out_row = out + static_cast<int64_t>(row) * params.out_strides.row + ((lane & 3) << 1);
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
#pragma unroll
        for (int dt = 0; dt < 8; ++dt) {
          *reinterpret_cast<uint32_t*>(out_row + slab * 64 + dt * 8) = ElementTraits<Element>::pack(
              o[slab][dt][2 * half] * inv_sum, o[slab][dt][2 * half + 1] * inv_sum);
        }
      }
      if ((lane & 3) == 0) {
        lse[row] = sum > 0.0F ? row_max[half] * params.softmax_scale + logf(sum) : -INFINITY;
      }
    }
  }
}

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_FWD_WGMMA_KERNEL_CUH_
