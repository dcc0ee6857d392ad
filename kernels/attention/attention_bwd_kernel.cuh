// Backward attention kernels, flash-attention-2 style.
//   attention_bwd_delta_kernel: delta = rowsum(dout ∘ out) per (batch, head, row).
//   attention_bwd_kernel: one thread block per (kBlockN keys, key/value head, batch). It keeps its
//   K, V tile in shared memory and dK, dV in registers, and streams the query tiles of every query
//   head of its GQA group through double-buffered shared memory (cp.async one tile ahead):
//     Sᵀ = K·Qᵀ, Pᵀ = exp(Sᵀ - lse), dV += Pᵀ·dO, dPᵀ = V·dOᵀ, dSᵀ = Pᵀ ∘ (dPᵀ - delta),
//     dK += dSᵀ·Q, dQ += dS·K (dS through shared memory, dQ atomically added to the fp32
//     accumulator, in 16 x 64 pieces spread over the warps).
//   Each warp owns 16 keys; since the block owns its keys for all heads of the group, dK and dV are
//   added to their accumulators without atomics.
#ifndef TRAINSIM_KERNELS_ATTENTION_ATTENTION_BWD_KERNEL_CUH_
#define TRAINSIM_KERNELS_ATTENTION_ATTENTION_BWD_KERNEL_CUH_

#include <cmath>
#include <cstdint>

#include "kernels/attention/attention_params.h"
#include "kernels/attention/tile.cuh"

namespace trainsim::kernels::attention_impl {

template <int kHeadDim_, int kBlockM_, int kWarps_>
struct BwdTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;      // query rows per step
  static constexpr int kBlockN = 16 * kWarps_;  // keys per block, 16 per warp
  static constexpr int kWarps = kWarps_;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kQTiles = kBlockM / 8;   // 8-column tiles of Sᵀ
  static constexpr int kDTiles = kHeadDim / 8;  // 8-column tiles of dK, dV
  static constexpr int kDqCols = 64;            // dQ is computed in 16 x kDqCols pieces (register budget) ...
  static constexpr int kDqPieces = (kBlockM / 16) * (kHeadDim / kDqCols);  // ... spread over the warps
  using KvTile = SmemTile<kBlockN, kHeadDim>;
  using QTile = SmemTile<kBlockM, kHeadDim>;
  using DsTile = SmemTile<kBlockN, kBlockM>;  // dSᵀ, [key][query]
  // K, V, then Q[2], dO[2], dSᵀ, then lse[2] and delta[2] (fp32).
  static constexpr int kSmemBytes =
      2 * KvTile::kBytes + 4 * QTile::kBytes + DsTile::kBytes + 4 * kBlockM * static_cast<int>(sizeof(float));
  static_assert(kDqPieces % kWarps == 0, "the dQ pieces must split evenly over the warps");
  static_assert(kBlockM % 16 == 0 && kHeadDim % kDqCols == 0 && kBlockM <= kThreads, "tile shape");
};

// delta[b, h, i] = sum_d dout[b, i, h, d]·out[b, i, h, d]; kHeadDim / 8 threads per row, 16-byte loads.
template <typename Element, int kHeadDim>
__global__ void attention_bwd_delta_kernel(const AttentionBwdParams params) {
  constexpr int kThreadsPerRow = kHeadDim / 8;
  const int64_t rows = static_cast<int64_t>(params.fwd.batch) * params.fwd.heads * params.fwd.q_len;
  const int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kThreadsPerRow;
  const int chunk = static_cast<int>(threadIdx.x) % kThreadsPerRow;
  float sum = 0.0F;
  if (row < rows) {
    const int64_t i = row % params.fwd.q_len;
    const int64_t h = (row / params.fwd.q_len) % params.fwd.heads;
    const int64_t b = row / (static_cast<int64_t>(params.fwd.q_len) * params.fwd.heads);
    const Element* dout = static_cast<const Element*>(params.dout) + b * params.dout_strides.batch +
                          i * params.dout_strides.row + h * params.dout_strides.head + chunk * 8;
    const Element* out = static_cast<const Element*>(params.fwd.out) + b * params.fwd.out_strides.batch +
                         i * params.fwd.out_strides.row + h * params.fwd.out_strides.head + chunk * 8;
    const uint4 dout_bits = *reinterpret_cast<const uint4*>(dout);
    const uint4 out_bits = *reinterpret_cast<const uint4*>(out);
    const Element* dout_values = reinterpret_cast<const Element*>(&dout_bits);
    const Element* out_values = reinterpret_cast<const Element*>(&out_bits);
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      sum +=
          ElementTraits<Element>::to_float(dout_values[e]) * ElementTraits<Element>::to_float(out_values[e]);
    }
  }
#pragma unroll
  for (int offset = 1; offset < kThreadsPerRow; offset <<= 1) {
    sum += __shfl_xor_sync(0xffffffffU, sum, offset);
  }
  if (row < rows && chunk == 0) {
    params.delta[row] = sum;
  }
}

// The key/value block of a backward thread block: blockIdx.x tiles the keys by kBlockN, y is the
// key/value head, z the batch.
template <typename Element>
struct BwdBlock {
  const Element* k;  // row kv_start of the key/value head
  const Element* v;
  int batch;
  int kv_head;
  int kv_start;
  int kv_rows;  // valid rows of the block
  int shift;    // bottom-right causal alignment: key j <= row i + shift
};

template <typename Element, int kBlockN>
__device__ __forceinline__ BwdBlock<Element> bwd_block(const AttentionFwdParams& fwd) {
  const int kv_head = static_cast<int>(blockIdx.y);
  const int batch = static_cast<int>(blockIdx.z);
  const int kv_start = static_cast<int>(blockIdx.x) * kBlockN;
  return {static_cast<const Element*>(fwd.k) + batch * fwd.k_strides.batch +
              static_cast<int64_t>(kv_start) * fwd.k_strides.row + kv_head * fwd.k_strides.head,
          static_cast<const Element*>(fwd.v) + batch * fwd.v_strides.batch +
              static_cast<int64_t>(kv_start) * fwd.v_strides.row + kv_head * fwd.v_strides.head,
          batch,
          kv_head,
          kv_start,
          min(kBlockN, fwd.kv_len - kv_start),
          fwd.kv_len - fwd.q_len};
}

// The (query head, query tile) tasks of a backward block that owns keys [kv_start, kv_start +
// block_n) of one key/value head: every head of the GQA group, the query tiles of kBlockM rows from
// the first one that sees these keys (causal) to the end.
template <int kBlockM>
struct KeyBlockTasks {
  __device__ KeyBlockTasks(const AttentionFwdParams& fwd, int kv_head_, int kv_start)
      : kv_head(kv_head_), group(fwd.heads / fwd.kv_heads) {
    // Bottom-right causal alignment: rows before kv_start - (kv_len - q_len) see none of the keys.
    const int first_row = fwd.causal ? max(0, kv_start - (fwd.kv_len - fwd.q_len)) : 0;
    m_begin = first_row / kBlockM;
    tiles_per_head = first_row < fwd.q_len ? ceil_div(fwd.q_len, kBlockM) - m_begin : 0;
    count = group * tiles_per_head;
  }
  __device__ int head(int t) const { return kv_head * group + t / tiles_per_head; }
  __device__ int q_start(int t) const { return (m_begin + t % tiles_per_head) * kBlockM; }

  int kv_head;
  int group;
  int m_begin = 0;
  int tiles_per_head = 0;
  int count = 0;  // 0: no query sees these keys
};

// The shared memory of a backward block, from `base` on: K and V (kKvSize units of T each), Q and dO
// (two stages of kQSize units each), dSᵀ (kDsSize units), then lse and delta (two stages of kBlockM
// floats each). T is the element of the sm_80 kernel's tiles, char for the wgmma kernel's slabs.
template <typename T>
struct BwdShared {
  T* k;
  T* v;
  T* q;     // [2] stages
  T* dout;  // [2] stages
  T* ds;
  float* lse;    // [2][kBlockM]
  float* delta;  // [2][kBlockM]
};

template <int kKvSize, int kQSize, int kDsSize, int kBlockM, typename T>
__device__ __forceinline__ BwdShared<T> bwd_shared(T* base) {
  BwdShared<T> shared;
  shared.k = base;
  shared.v = shared.k + kKvSize;
  shared.q = shared.v + kKvSize;
  shared.dout = shared.q + 2 * kQSize;
  shared.ds = shared.dout + 2 * kQSize;
  shared.lse = reinterpret_cast<float*>(shared.ds + kDsSize);
  shared.delta = shared.lse + 2 * kBlockM;
  return shared;
}

// Where the inputs of a task start: its q and dout rows, lse and delta; `valid` rows of kBlockM.
template <typename Element>
struct TaskInputs {
  const Element* q;
  const Element* dout;
  const float* lse;
  const float* delta;
  int valid;
};

template <typename Element, int kBlockM>
__device__ TaskInputs<Element> task_inputs(const AttentionBwdParams& params, int batch, int head,
                                           int q_start) {
  const AttentionFwdParams& fwd = params.fwd;
  const int64_t row_offset = (static_cast<int64_t>(batch) * fwd.heads + head) * fwd.q_len + q_start;
  return {static_cast<const Element*>(fwd.q) + batch * fwd.q_strides.batch +
              static_cast<int64_t>(q_start) * fwd.q_strides.row + head * fwd.q_strides.head,
          static_cast<const Element*>(params.dout) + batch * params.dout_strides.batch +
              static_cast<int64_t>(q_start) * params.dout_strides.row + head * params.dout_strides.head,
          fwd.lse + row_offset, params.delta + row_offset, min(kBlockM, fwd.q_len - q_start)};
}

// Pᵀ = exp(scale·Sᵀ - lse) in place, for accumulator tiles [kTiles][4] (mma layout) of Sᵀ over the
// keys key0 + 0..15 of `block` and the queries q_start + 0..kTiles·8-1 of a task (their lse from
// `lse`); zero where masked (past q_len or kv_len, or after the diagonal).
template <typename Element, int kTiles>
__device__ __forceinline__ void recompute_probabilities(float (&p)[kTiles][4], const AttentionFwdParams& fwd,
                                                        const BwdBlock<Element>& block, int key0, int q_start,
                                                        const float* lse, int lane) {
  const float scale_log2 = fwd.softmax_scale * kLog2e;
#pragma unroll
  for (int nt = 0; nt < kTiles; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = block.kv_start + key0 + accumulator_row(lane, e);
      const int col = nt * 8 + accumulator_col(lane, e);
      const int row = q_start + col;
      const bool visible = row < fwd.q_len && key < fwd.kv_len && (!fwd.causal || key <= row + block.shift);
      p[nt][e] = visible ? ptx::fast_exp2(p[nt][e] * scale_log2 - lse[col] * kLog2e) : 0.0F;
    }
  }
}

// dSᵀ = Pᵀ ∘ (dPᵀ - delta) in place of dPᵀ, for accumulator tiles [kTiles][4] (mma layout) over the
// queries 0..kTiles·8-1 of a task (their delta from `delta`).
template <int kTiles>
__device__ __forceinline__ void score_gradients(float (&ds)[kTiles][4], const float (&p)[kTiles][4],
                                                const float* delta, int lane) {
#pragma unroll
  for (int nt = 0; nt < kTiles; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      ds[nt][e] = p[nt][e] * (ds[nt][e] - delta[nt * 8 + accumulator_col(lane, e)]);
    }
  }
}

// dq_accum += scale·dQ, atomically (the other key blocks add to the same rows), for accumulator
// tiles [kTiles][4] (mma layout) holding the rows row0 + 0..15 of the query tile at q_start of query
// head `head`, columns col0 + 0..kTiles·8-1.
template <int kHeadDim, typename Element, int kTiles>
__device__ __forceinline__ void add_query_gradients(const AttentionBwdParams& params,
                                                    const BwdBlock<Element>& block, int head, int q_start,
                                                    int row0, int col0, int lane,
                                                    const float (&dq)[kTiles][4]) {
  const AttentionFwdParams& fwd = params.fwd;
  float* dq_accum = params.dq_accum +
                    ((static_cast<int64_t>(block.batch) * fwd.q_len + q_start) * fwd.heads + head) * kHeadDim;
  const int64_t dq_row_stride = static_cast<int64_t>(fwd.heads) * kHeadDim;
#pragma unroll
  for (int nt = 0; nt < kTiles; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = row0 + accumulator_row(lane, e);
      if (q_start + row < fwd.q_len) {
        atomicAdd(dq_accum + row * dq_row_stride + col0 + nt * 8 + accumulator_col(lane, e),
                  dq[nt][e] * fwd.softmax_scale);
      }
    }
  }
}

// dk_accum += scale·dK, dv_accum += dV for accumulator tiles [kTiles][4] (mma layout) holding the
// keys key0 + 0..15 of `block`, all head_dim columns.
template <typename Element, int kTiles>
__device__ void add_key_gradients(const AttentionBwdParams& params, const BwdBlock<Element>& block, int key0,
                                  int lane, const float (&dk)[kTiles][4], const float (&dv)[kTiles][4]) {
  const AttentionFwdParams& fwd = params.fwd;
  const int64_t kv_row_stride = static_cast<int64_t>(fwd.kv_heads) * fwd.head_dim;
  const int64_t kv_offset =
      ((static_cast<int64_t>(block.batch) * fwd.kv_len + block.kv_start) * fwd.kv_heads + block.kv_head) *
      fwd.head_dim;
#pragma unroll
  for (int dt = 0; dt < kTiles; ++dt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = key0 + accumulator_row(lane, e);
      if (key < block.kv_rows) {
        const int64_t index = kv_offset + key * kv_row_stride + dt * 8 + accumulator_col(lane, e);
        params.dk_accum[index] += dk[dt][e] * fwd.softmax_scale;
        params.dv_accum[index] += dv[dt][e];
      }
    }
  }
}

template <typename Element, typename Traits>
__global__ void __launch_bounds__(Traits::kThreads) attention_bwd_kernel(const AttentionBwdParams params) {
  using KvTile = typename Traits::KvTile;
  using QTile = typename Traits::QTile;
  using DsTile = typename Traits::DsTile;
  constexpr int kBlockM = Traits::kBlockM;
  constexpr int kBlockN = Traits::kBlockN;
  constexpr int kQTiles = Traits::kQTiles;
  constexpr int kDTiles = Traits::kDTiles;
  constexpr int kThreads = Traits::kThreads;
  constexpr int kHeadDim = Traits::kHeadDim;
  const AttentionFwdParams& fwd = params.fwd;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const BwdBlock<Element> block = bwd_block<Element, kBlockN>(fwd);
  const KeyBlockTasks<kBlockM> tasks(fwd, block.kv_head, block.kv_start);
  if (tasks.count == 0) {
    return;  // no query sees these keys: nothing to add
  }

  const BwdShared<Element> shared =
      bwd_shared<KvTile::kElements, QTile::kElements, DsTile::kElements, kBlockM>(
          reinterpret_cast<Element*>(ptx::dynamic_smem()));

  // Starts the loads of task t (query head, query tile) into `stage`.
  auto load_task = [&](int t, int stage) {
    const TaskInputs<Element> in =
        task_inputs<Element, kBlockM>(params, block.batch, tasks.head(t), tasks.q_start(t));
    load_tile_async<QTile, kThreads>(shared.q + stage * QTile::kElements, in.q, fwd.q_strides.row, in.valid,
                                     tid);
    load_tile_async<QTile, kThreads>(shared.dout + stage * QTile::kElements, in.dout, params.dout_strides.row,
                                     in.valid, tid);
    load_floats_async<kThreads>(shared.lse + stage * kBlockM, in.lse, kBlockM, in.valid, tid);
    load_floats_async<kThreads>(shared.delta + stage * kBlockM, in.delta, kBlockM, in.valid, tid);
  };

  load_tile_async<KvTile, kThreads>(shared.k, block.k, fwd.k_strides.row, block.kv_rows, tid);
  load_tile_async<KvTile, kThreads>(shared.v, block.v, fwd.v_strides.row, block.kv_rows, tid);
  load_task(0, 0);
  ptx::cp_async_commit();

  float dk[kDTiles][4] = {};
  float dv[kDTiles][4] = {};
  const int warp_key0 = warp * 16;

  for (int t = 0; t < tasks.count; ++t) {
    const int stage = t & 1;
    load_next_and_wait(t, tasks.count, load_task);
    __syncthreads();
    const int head = tasks.head(t);
    const int q_start = tasks.q_start(t);
    const Element* tile_q = shared.q + stage * QTile::kElements;
    const Element* tile_do = shared.dout + stage * QTile::kElements;
    const float* tile_lse = shared.lse + stage * kBlockM;
    const float* tile_delta = shared.delta + stage * kBlockM;

    // Sᵀ = K·Qᵀ for this warp's 16 keys, then Pᵀ in place.
    float p[kQTiles][4] = {};
    warp_mma_abt<KvTile, QTile, kHeadDim>(p, shared.k, warp_key0, tile_q, lane);
    recompute_probabilities(p, fwd, block, warp_key0, q_start, tile_lse, lane);
    // dV += Pᵀ·dO.
    warp_mma_pb<QTile>(dv, p, tile_do, lane);
    // dPᵀ = V·dOᵀ, then dSᵀ = Pᵀ ∘ (dPᵀ - delta) in place.
    float ds[kQTiles][4] = {};
    warp_mma_abt<KvTile, QTile, kHeadDim>(ds, shared.v, warp_key0, tile_do, lane);
    score_gradients(ds, p, tile_delta, lane);
    // dK += dSᵀ·Q.
    warp_mma_pb<QTile>(dk, ds, tile_q, lane);
    // dSᵀ to shared memory, [key][query].
#pragma unroll
    for (int nt = 0; nt < kQTiles; ++nt) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int key = warp_key0 + (lane >> 2) + half * 8;
        *reinterpret_cast<uint32_t*>(shared.ds + DsTile::offset(key, nt) + ((lane & 3) << 1)) =
            ElementTraits<Element>::pack(ds[nt][2 * half], ds[nt][2 * half + 1]);
      }
    }
    __syncthreads();

    // dQ += scale·dS·K for this warp's query rows, atomically added (other key blocks add too).
#pragma unroll
    for (int piece = warp; piece < Traits::kDqPieces; piece += Traits::kWarps) {
      const int m0 = (piece % (kBlockM / 16)) * 16;
      const int d0 = (piece / (kBlockM / 16)) * Traits::kDqCols;
      float acc[Traits::kDqCols / 8][4] = {};
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        uint32_t a[4];
        load_a_trans<DsTile>(a, shared.ds, m0, kk * 16, lane);
#pragma unroll
        for (int dp = 0; dp < Traits::kDqCols / 16; ++dp) {
          uint32_t b[2][2];
          load_b_pair_trans<KvTile>(b, shared.k, kk * 16, d0 + dp * 16, lane);
          ptx::mma_m16n8k16<Element>(acc[2 * dp], a, b[0]);
          ptx::mma_m16n8k16<Element>(acc[2 * dp + 1], a, b[1]);
        }
      }
      add_query_gradients<kHeadDim>(params, block, head, q_start, m0, d0, lane, acc);
    }
    __syncthreads();  // dSᵀ and this stage are free again
  }

  // This block owns these keys: no atomics.
  add_key_gradients(params, block, warp_key0, lane, dk, dv);
}

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_BWD_KERNEL_CUH_
