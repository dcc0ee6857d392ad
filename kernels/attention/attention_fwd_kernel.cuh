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

// Where a forward block's tensors start: the block holds query rows [q_start, q_start + kBlockM)
// (q_rows of them exist) of one (head, batch); keys [0, kv_end) can be visible to them.
template <typename Element>
struct FwdBlock {
  const Element* q;  // row q_start
  const Element* k;  // row 0 of the key/value head
  const Element* v;
  Element* out;  // row q_start
  float* lse;    // row q_start
  int q_start;
  int q_rows;
  int shift;  // bottom-right causal alignment: key j <= row i + shift
  int kv_end;
};

template <typename Element, int kBlockM>
__device__ __forceinline__ FwdBlock<Element> fwd_block(const AttentionFwdParams& params) {
  const int head = static_cast<int>(blockIdx.y);
  const int batch = static_cast<int>(blockIdx.z);
  const int kv_head = head / (params.heads / params.kv_heads);
  const int q_start = static_cast<int>(blockIdx.x) * kBlockM;
  const int shift = params.kv_len - params.q_len;
  return {static_cast<const Element*>(params.q) + batch * params.q_strides.batch +
              static_cast<int64_t>(q_start) * params.q_strides.row + head * params.q_strides.head,
          static_cast<const Element*>(params.k) + batch * params.k_strides.batch +
              kv_head * params.k_strides.head,
          static_cast<const Element*>(params.v) + batch * params.v_strides.batch +
              kv_head * params.v_strides.head,
          static_cast<Element*>(params.out) + batch * params.out_strides.batch +
              static_cast<int64_t>(q_start) * params.out_strides.row + head * params.out_strides.head,
          params.lse + (static_cast<int64_t>(batch) * params.heads + head) * params.q_len + q_start,
          q_start,
          min(kBlockM, params.q_len - q_start),
          shift,
          params.causal ? min(params.kv_len, q_start + kBlockM + shift) : params.kv_len};
}

// Sets to -inf the scores of a 16-row accumulator tile (absolute first row `row0`, keys from
// `n_start`) for keys past kv_len and, when causal, after the row's diagonal.
template <int kNTiles>
__device__ __forceinline__ void mask_scores(float (&s)[kNTiles][4], const AttentionFwdParams& params,
                                            int shift, int row0, int n_start, int lane) {
#pragma unroll
  for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = row0 + accumulator_row(lane, e);
      const int col = n_start + nt * 8 + accumulator_col(lane, e);
      if (col >= params.kv_len || (params.causal && col > row + shift)) {
        s[nt][e] = -INFINITY;
      }
    }
  }
}

// Whether the key tile [n_start, n_start + kBlockN) needs mask_scores for some row of `block`: it
// reaches past kv_len or, when causal, past the diagonal of the block's first row.
template <int kBlockN, typename Element>
__device__ __forceinline__ bool tile_needs_mask(const FwdBlock<Element>& block,
                                                const AttentionFwdParams& params, int n_start) {
  return n_start + kBlockN > params.kv_len ||
         (params.causal && n_start + kBlockN - 1 > block.q_start + block.shift);
}

// One online-softmax step of a 16-row accumulator tile: the new running max, the running sum and
// the output accumulator rescaled, the scores replaced by P = exp(S - max) (scaled, base 2).
template <int kNTiles, int kDTiles>
__device__ __forceinline__ void online_softmax(float (&s)[kNTiles][4], float (&o)[kDTiles][4],
                                               float (&row_max)[2], float (&row_sum)[2], float scale_log2) {
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
    for (int dt = 0; dt < kDTiles; ++dt) {
      o[dt][2 * half] *= rescale;
      o[dt][2 * half + 1] *= rescale;
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
}

// out = O / sum and lse = max·scale + log(sum) for a 16-row accumulator tile at block row `row0`;
// a row that saw no key gets 0 and -inf.
template <typename Element, int kDTiles>
__device__ __forceinline__ void store_output(const FwdBlock<Element>& block, const AttentionFwdParams& params,
                                             const float (&o)[kDTiles][4], const float (&row_max)[2],
                                             const float (&row_sum)[2], int row0, int lane) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const float sum = quad_sum(row_sum[half]);
    const float inv_sum = sum > 0.0F ? 1.0F / sum : 0.0F;
    const int row = row0 + (lane >> 2) + half * 8;
    if (row < block.q_rows) {
      Element* out_row = block.out + static_cast<int64_t>(row) * params.out_strides.row + ((lane & 3) << 1);
#pragma unroll
      for (int dt = 0; dt < kDTiles; ++dt) {
        *reinterpret_cast<uint32_t*>(out_row + dt * 8) =
            ElementTraits<Element>::pack(o[dt][2 * half] * inv_sum, o[dt][2 * half + 1] * inv_sum);
      }
      if ((lane & 3) == 0) {
        block.lse[row] = sum > 0.0F ? row_max[half] * params.softmax_scale + logf(sum) : -INFINITY;
      }
    }
  }
}

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
  const FwdBlock<Element> block = fwd_block<Element, kBlockM>(params);

  const int n_tiles = block.kv_end > 0 ? ceil_div(block.kv_end, kBlockN) : 0;
  Element* s_q = reinterpret_cast<Element*>(ptx::dynamic_smem());
  Element* s_k = s_q + QTile::kElements;
  Element* s_v = s_k + 2 * KvTile::kElements;

  // Starts the loads of key/value tile `tile` into `stage`.
  auto load_kv = [&](int tile, int stage) {
    const int n_start = tile * kBlockN;
    const int valid = min(kBlockN, params.kv_len - n_start);
    load_tile_async<KvTile, kThreads>(s_k + stage * KvTile::kElements,
                                      block.k + static_cast<int64_t>(n_start) * params.k_strides.row,
                                      params.k_strides.row, valid, tid);
    load_tile_async<KvTile, kThreads>(s_v + stage * KvTile::kElements,
                                      block.v + static_cast<int64_t>(n_start) * params.v_strides.row,
                                      params.v_strides.row, valid, tid);
  };

  if (n_tiles > 0) {
    load_tile_async<QTile, kThreads>(s_q, block.q, params.q_strides.row, block.q_rows, tid);
    load_kv(0, 0);
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
    load_next_and_wait(tile, n_tiles, load_kv);
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

    // Mask keys past kv_len and, for causal blocks, keys after the row's diagonal; online softmax.
    if (tile_needs_mask<kBlockN>(block, params, n_start)) {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        mask_scores(s[mt], params, block.shift, block.q_start + warp_row0 + mt * 16, n_start, lane);
      }
    }
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      online_softmax(s[mt], o[mt], row_max[mt], row_sum[mt], scale_log2);
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

#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    store_output(block, params, o[mt], row_max[mt], row_sum[mt], warp_row0 + mt * 16, lane);
  }
}

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_FWD_KERNEL_CUH_
