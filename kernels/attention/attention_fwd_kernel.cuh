// Forward attention kernel, flash-attention-2 style: one thread block per (kBlockM query rows,
// head, batch); the key/value tiles stream through double-buffered shared memory (cp.async one tile
// ahead); scores and the output accumulate in registers (mma.sync, fp32) with the online softmax,
// so no q_len x kv_len matrix ever exists. Each warp owns kBlockM / kWarps query rows.
#ifndef TRAINSIM_KERNELS_ATTENTION_ATTENTION_FWD_KERNEL_CUH_
#define TRAINSIM_KERNELS_ATTENTION_ATTENTION_FWD_KERNEL_CUH_

#include <cmath>
#include <cstdint>

#include "kernels/attention/attention_params.h"
#include "kernels/attention/tile.cuh"

namespace trainsim::kernels::attention_impl {

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kWarps_>
struct FwdTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;  // query rows per block
  static constexpr int kBlockN = kBlockN_;  // keys per tile
  static constexpr int kWarps = kWarps_;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kWarpRows = kBlockM / kWarps;
  static constexpr int kMTiles = kWarpRows / 16;  // 16-row mma tiles per warp
  static constexpr int kNTiles = kBlockN / 8;     // 8-column score tiles
  static constexpr int kDTiles = kHeadDim / 8;    // 8-column output tiles
  using QTile = SmemTile<kBlockM, kHeadDim>;
  using KvTile = SmemTile<kBlockN, kHeadDim>;
  // Q, then K[2] and V[2].
  static constexpr int kSmemBytes = QTile::kBytes + 4 * KvTile::kBytes;
  static_assert(kWarpRows % 16 == 0 && kBlockN % 16 == 0 && kHeadDim % 16 == 0, "mma tiles are 16 wide");
};

template <typename Element, typename Traits>
__global__ void __launch_bounds__(Traits::kThreads) attention_fwd_kernel(const AttentionFwdParams params) {
  using QTile = typename Traits::QTile;
  using KvTile = typename Traits::KvTile;
  constexpr int kBlockM = Traits::kBlockM;
  constexpr int kBlockN = Traits::kBlockN;
  constexpr int kMTiles = Traits::kMTiles;
  constexpr int kNTiles = Traits::kNTiles;
  constexpr int kDTiles = Traits::kDTiles;
  constexpr int kThreads = Traits::kThreads;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
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

  const int n_tiles = kv_end > 0 ? ceil_div(kv_end, kBlockN) : 0;
  Element* s_q = reinterpret_cast<Element*>(ptx::dynamic_smem());
  Element* s_k = s_q + QTile::kElements;
  Element* s_v = s_k + 2 * KvTile::kElements;
  if (n_tiles > 0) {
    load_tile_async<QTile, kThreads>(s_q, q, params.q_strides.row, q_rows, tid);
    load_tile_async<KvTile, kThreads>(s_k, k, params.k_strides.row, min(kBlockN, params.kv_len), tid);
    load_tile_async<KvTile, kThreads>(s_v, v, params.v_strides.row, min(kBlockN, params.kv_len), tid);
  }
  ptx::cp_async_commit();

  float o[kMTiles][kDTiles][4] = {};
  float row_max[kMTiles][2];
  float row_sum[kMTiles][2] = {};
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    row_max[mt][0] = -INFINITY;
    row_max[mt][1] = -INFINITY;
  }
  const float scale_log2 = params.softmax_scale * kLog2e;
  const int warp_row0 = warp * Traits::kWarpRows;

  for (int tile = 0; tile < n_tiles; ++tile) {
    const int stage = tile & 1;
    const int n_start = tile * kBlockN;
    if (tile + 1 < n_tiles) {
      const int next_start = n_start + kBlockN;
      const int valid = min(kBlockN, params.kv_len - next_start);
      load_tile_async<KvTile, kThreads>(s_k + (stage ^ 1) * KvTile::kElements,
                                        k + static_cast<int64_t>(next_start) * params.k_strides.row,
                                        params.k_strides.row, valid, tid);
      load_tile_async<KvTile, kThreads>(s_v + (stage ^ 1) * KvTile::kElements,
                                        v + static_cast<int64_t>(next_start) * params.v_strides.row,
                                        params.v_strides.row, valid, tid);
    }
    ptx::cp_async_commit();
    ptx::cp_async_wait<1>();
    __syncthreads();
    const Element* tile_k = s_k + stage * KvTile::kElements;
    const Element* tile_v = s_v + stage * KvTile::kElements;

    // S = Q·Kᵀ for this warp's rows.
    float s[kMTiles][kNTiles][4] = {};
#pragma unroll
    for (int ks = 0; ks < Traits::kHeadDim / 16; ++ks) {
      uint32_t a[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        load_a<QTile>(a[mt], s_q, warp_row0 + mt * 16, ks * 16, lane);
      }
#pragma unroll
      for (int np = 0; np < kNTiles / 2; ++np) {
        uint32_t b[2][2];
        load_b_pair<KvTile>(b, tile_k, np * 16, ks * 16, lane);
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          ptx::mma_m16n8k16<Element>(s[mt][2 * np], a[mt], b[0]);
          ptx::mma_m16n8k16<Element>(s[mt][2 * np + 1], a[mt], b[1]);
        }
      }
    }

    // Mask keys past kv_len and, for causal blocks, keys after the row's diagonal.
    const bool needs_mask =
        n_start + kBlockN > params.kv_len || (params.causal && n_start + kBlockN - 1 > q_start + shift);
    if (needs_mask) {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int row = q_start + warp_row0 + mt * 16 + accumulator_row(lane, e);
            const int col = n_start + nt * 8 + accumulator_col(lane, e);
            if (col >= params.kv_len || (params.causal && col > row + shift)) {
              s[mt][nt][e] = -INFINITY;
            }
          }
        }
      }
    }

    // Online softmax: new running max, rescale the running sum and output, P = exp(S - max).
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float m = row_max[mt][half];
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          m = fmaxf(m, fmaxf(s[mt][nt][2 * half], s[mt][nt][2 * half + 1]));
        }
        m = quad_max(m);
        // A row that has seen no key yet keeps max = -inf; subtracting 0 then gives P = 0, not NaN.
        const float m_scaled = m == -INFINITY ? 0.0F : m * scale_log2;
        const float rescale = ptx::fast_exp2(row_max[mt][half] * scale_log2 - m_scaled);
        row_max[mt][half] = m;
        float sum = row_sum[mt][half] * rescale;
#pragma unroll
        for (int dt = 0; dt < kDTiles; ++dt) {
          o[mt][dt][2 * half] *= rescale;
          o[mt][dt][2 * half + 1] *= rescale;
        }
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
          for (int e = 2 * half; e < 2 * half + 2; ++e) {
            const float p = ptx::fast_exp2(s[mt][nt][e] * scale_log2 - m_scaled);
            s[mt][nt][e] = p;
            sum += p;
          }
        }
        row_sum[mt][half] = sum;
      }
    }

    // O += P·V, P taken from the score registers.
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      uint32_t a[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        accumulators_to_a<Element>(a[mt], s[mt], kk);
      }
#pragma unroll
      for (int dp = 0; dp < kDTiles / 2; ++dp) {
        uint32_t b[2][2];
        load_b_pair_trans<KvTile>(b, tile_v, kk * 16, dp * 16, lane);
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          ptx::mma_m16n8k16<Element>(o[mt][2 * dp], a[mt], b[0]);
          ptx::mma_m16n8k16<Element>(o[mt][2 * dp + 1], a[mt], b[1]);
        }
      }
    }
    __syncthreads();  // every warp is done with this stage before it is refilled
  }

  // out = O / sum, lse = max·scale + log(sum); a row that saw no key gets 0 and -inf.
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const float sum = quad_sum(row_sum[mt][half]);
      const float inv_sum = sum > 0.0F ? 1.0F / sum : 0.0F;
      const int row = warp_row0 + mt * 16 + (lane >> 2) + half * 8;
      if (row < q_rows) {
        Element* out_row = out + static_cast<int64_t>(row) * params.out_strides.row + ((lane & 3) << 1);
#pragma unroll
        for (int dt = 0; dt < kDTiles; ++dt) {
          *reinterpret_cast<uint32_t*>(out_row + dt * 8) =
              ElementTraits<Element>::pack(o[mt][dt][2 * half] * inv_sum, o[mt][dt][2 * half + 1] * inv_sum);
        }
        if ((lane & 3) == 0) {
          lse[row] = sum > 0.0F ? row_max[mt][half] * params.softmax_scale + logf(sum) : -INFINITY;
        }
      }
    }
  }
}

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_FWD_KERNEL_CUH_
