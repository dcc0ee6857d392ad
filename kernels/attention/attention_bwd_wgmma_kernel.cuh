// Backward attention kernel for Hopper (sm_90a) with warpgroup MMAs (kernels/cuda/wgmma.cuh): the
// algorithm of attention_bwd_kernel.cuh (the block owns kBlockN keys of one key/value head for all
// query heads of its group, keeps dK and dV in registers and streams (head, query tile) tasks through
// double-buffered shared memory), with every product issued as wgmma over whole tiles. Two warpgroups
// of 64 keys each; 64 query rows per task.
//   Sᵀ = K·Qᵀ, dPᵀ = V·dOᵀ        m64n64k16, K/V and Q/dO from shared memory (all K-major)
//   Pᵀ, dSᵀ = Pᵀ ∘ (dPᵀ - delta)  in registers
//   dV += Pᵀ·dO, dK += dSᵀ·Q       m64n64k16 per 64-column slab, A from registers, B MN-major
//   dQ += dS·K                     dSᵀ through shared memory, read MN-major as A; K MN-major as B;
//                                  each warpgroup one 64-column slab of dQ (head_dim 128) or half the
//                                  keys (head_dim 64); fp32 atomics to the accumulator.
// The delta kernel (rowsum(dout ∘ out)) and the task bookkeeping are attention_bwd_kernel.cuh's.
#ifndef TRAINSIM_KERNELS_ATTENTION_ATTENTION_BWD_WGMMA_KERNEL_CUH_
#define TRAINSIM_KERNELS_ATTENTION_ATTENTION_BWD_WGMMA_KERNEL_CUH_

#include <cmath>
#include <cstdint>

#include "kernels/attention/attention_bwd_kernel.cuh"
#include "kernels/attention/attention_params.h"
#include "kernels/attention/tile.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace trainsim::kernels::attention_impl {

template <int kHeadDim_>
struct WgmmaBwdTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockN = 128;  // keys per block, 64 per warpgroup
  static constexpr int kBlockM = 64;   // query rows per task
  static constexpr int kThreads = 256;
  static constexpr int kSlabs = kHeadDim / 64;   // 64-column swizzle slabs of a head_dim row
  static constexpr int kKeySplits = 2 / kSlabs;  // dQ: warpgroups split the keys when one slab is all
  static constexpr int kKvBytes = kBlockN * kHeadDim * 2;
  static constexpr int kQBytes = kBlockM * kHeadDim * 2;
  static constexpr int kDsBytes = kBlockN * kBlockM * 2;  // dSᵀ, [key][query]: one slab
  // K, V, Q[2], dO[2], dSᵀ, then lse[2] and delta[2] (fp32), and room for the 1024-byte alignment.
  static constexpr int kSmemBytes = 2 * kKvBytes + 4 * kQBytes + kDsBytes +
                                    4 * kBlockM * static_cast<int>(sizeof(float)) + wgmma::kGroupBytes;
  static_assert(kHeadDim == 64 || kHeadDim == 128, "head_dim 64 or 128");
  static_assert(kBlockM == 64, "dSᵀ rows are one 128-byte slab row");
};

template <typename Element, typename Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1)
    attention_bwd_wgmma_kernel(const AttentionBwdParams params) {
  constexpr int kHeadDim = Traits::kHeadDim;
  constexpr int kBlockN = Traits::kBlockN;
  constexpr int kBlockM = Traits::kBlockM;
  constexpr int kThreads = Traits::kThreads;
  constexpr int kSlabs = Traits::kSlabs;
  constexpr int kRow = wgmma::kSwizzleBytes;
  const AttentionFwdParams& fwd = params.fwd;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warpgroup = tid >> 7;
  const int warp_row0 = ((tid >> 5) & 3) * 16;  // first of this warp's 16 rows in its warpgroup's tile
  const BwdBlock<Element> block = bwd_block<Element, kBlockN>(fwd);
  const KeyBlockTasks<kBlockM> tasks(fwd, block.kv_head, block.kv_start);
  if (tasks.count == 0) {
    return;  // no query sees these keys: nothing to add
  }

  char* smem = ptx::dynamic_smem();
  smem += (wgmma::kGroupBytes - (ptx::shared_address(smem) % wgmma::kGroupBytes)) % wgmma::kGroupBytes;
  char* s_k = smem;
  char* s_v = s_k + Traits::kKvBytes;
  char* s_q = s_v + Traits::kKvBytes;      // [2] stages
  char* s_do = s_q + 2 * Traits::kQBytes;  // [2] stages
  char* s_ds = s_do + 2 * Traits::kQBytes;
  float* s_lse = reinterpret_cast<float*>(s_ds + Traits::kDsBytes);  // [2][kBlockM]
  float* s_delta = s_lse + 2 * kBlockM;                              // [2][kBlockM]
  const uint32_t k_address = ptx::shared_address(s_k);
  const uint32_t v_address = ptx::shared_address(s_v);
  const uint32_t q_address = ptx::shared_address(s_q);
  const uint32_t do_address = ptx::shared_address(s_do);
  const uint32_t ds_address = ptx::shared_address(s_ds);

  // Starts the loads of task t (query head, query tile) into `stage`.
  auto load_task = [&](int t, int stage) {
    const TaskInputs<Element> in =
        task_inputs<Element, kBlockM>(params, block.batch, tasks.head(t), tasks.q_start(t));
    load_swizzled_async<kBlockM, kHeadDim, kThreads>(s_q + stage * Traits::kQBytes, in.q, fwd.q_strides.row,
                                                     in.valid, tid);
    load_swizzled_async<kBlockM, kHeadDim, kThreads>(s_do + stage * Traits::kQBytes, in.dout,
                                                     params.dout_strides.row, in.valid, tid);
    load_floats_async<kThreads>(s_lse + stage * kBlockM, in.lse, kBlockM, in.valid, tid);
    load_floats_async<kThreads>(s_delta + stage * kBlockM, in.delta, kBlockM, in.valid, tid);
  };

  load_swizzled_async<kBlockN, kHeadDim, kThreads>(s_k, block.k, fwd.k_strides.row, block.kv_rows, tid);
  load_swizzled_async<kBlockN, kHeadDim, kThreads>(s_v, block.v, fwd.v_strides.row, block.kv_rows, tid);
  load_task(0, 0);
  ptx::cp_async_commit();

  float dk[kHeadDim / 8][4] = {};
  float dv[kHeadDim / 8][4] = {};
  const float scale_log2 = fwd.softmax_scale * kLog2e;
  const uint32_t wg_keys = warpgroup * 64 * kRow;  // this warpgroup's rows in a K/V slab
  // dQ: this warpgroup's output slab and keys.
  const int dq_slab = warpgroup % kSlabs;
  const int dq_key0 = (warpgroup / kSlabs) * (kBlockN / Traits::kKeySplits);

  for (int t = 0; t < tasks.count; ++t) {
    const int stage = t & 1;
    if (t + 1 < tasks.count) {
      load_task(t + 1, stage ^ 1);
    }
    ptx::cp_async_commit();
    ptx::cp_async_wait<1>();
    wgmma::fence_proxy_async();
    __syncthreads();
    const int head = tasks.head(t);
    const int q_start = tasks.q_start(t);
    const uint32_t tile_q = q_address + stage * Traits::kQBytes;
    const uint32_t tile_do = do_address + stage * Traits::kQBytes;
    const float* tile_lse = s_lse + stage * kBlockM;
    const float* tile_delta = s_delta + stage * kBlockM;

    // Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ for this warpgroup's 64 keys, 16 head_dim columns per instruction.
    float p[8][4] = {};
    float ds[8][4] = {};
    wgmma::fence_operands(p);
    wgmma::fence_operands(ds);
    wgmma::fence();
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 16; ++ks) {
      const uint32_t offset = (ks / 4) * (kBlockN * kRow) + wg_keys + (ks % 4) * 32;
      const uint32_t q_offset = (ks / 4) * (kBlockM * kRow) + (ks % 4) * 32;
      wgmma::mma_m64n64k16_ss<Element, false, false>(
          p, wgmma::make_descriptor(k_address + offset, wgmma::kGroupBytes),
          wgmma::make_descriptor(tile_q + q_offset, wgmma::kGroupBytes), ks > 0);
      wgmma::mma_m64n64k16_ss<Element, false, false>(
          ds, wgmma::make_descriptor(v_address + offset, wgmma::kGroupBytes),
          wgmma::make_descriptor(tile_do + q_offset, wgmma::kGroupBytes), ks > 0);
    }
    wgmma::commit_group();
    wgmma::wait_group<0>();
    wgmma::fence_operands(p);
    wgmma::fence_operands(ds);

    // Pᵀ = exp(scale·Sᵀ - lse), zero where masked (past q_len or kv_len, or after the diagonal);
    // dSᵀ = Pᵀ ∘ (dPᵀ - delta).
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = block.kv_start + warpgroup * 64 + warp_row0 + accumulator_row(lane, e);
        const int col = nt * 8 + accumulator_col(lane, e);
        const int row = q_start + col;
        const bool visible = row < fwd.q_len && key < fwd.kv_len && (!fwd.causal || key <= row + block.shift);
        p[nt][e] = visible ? ptx::fast_exp2(p[nt][e] * scale_log2 - tile_lse[col] * kLog2e) : 0.0F;
        ds[nt][e] = p[nt][e] * (ds[nt][e] - tile_delta[col]);
      }
    }

    // dV += Pᵀ·dO and dK += dSᵀ·Q: 16 queries per instruction, one instruction per 64-column slab.
    uint32_t a_p[kBlockM / 16][4];
    uint32_t a_ds[kBlockM / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBlockM / 16; ++kk) {
      accumulators_to_a<Element>(a_p[kk], p, kk);
      accumulators_to_a<Element>(a_ds[kk], ds, kk);
    }
    wgmma::fence_operands(dv);
    wgmma::fence_operands(dk);
    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < kBlockM / 16; ++kk) {
      wgmma::static_for<kSlabs>([&](auto slab) {
        constexpr int kSlab = decltype(slab)::value;
        const uint32_t offset = kSlab * (kBlockM * kRow) + kk * 16 * kRow;
        wgmma::mma_m64n64k16_rs_mn<Element, kSlab * 8>(
            dv, a_p[kk], wgmma::make_descriptor(tile_do + offset, wgmma::kGroupBytes));
        wgmma::mma_m64n64k16_rs_mn<Element, kSlab * 8>(
            dk, a_ds[kk], wgmma::make_descriptor(tile_q + offset, wgmma::kGroupBytes));
      });
    }
    wgmma::commit_group();

    // dSᵀ to shared memory ([key][query], one swizzled slab) while those run.
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int key = warpgroup * 64 + warp_row0 + (lane >> 2) + half * 8;
        *reinterpret_cast<uint32_t*>(s_ds + wgmma::swizzled_offset(key, nt) + ((lane & 3) << 2)) =
            ElementTraits<Element>::pack(ds[nt][2 * half], ds[nt][2 * half + 1]);
      }
    }
    wgmma::wait_group<0>();
    wgmma::fence_operands(dv);
    wgmma::fence_operands(dk);
    wgmma::fence_proxy_async();
    __syncthreads();

    // dQ += scale·dS·K: 64 queries x this warpgroup's 64 columns, over its keys; A = dS read from
    // dSᵀ (MN-major), B = K (MN-major).
    float dq[8][4] = {};
    wgmma::fence_operands(dq);
    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < kBlockN / Traits::kKeySplits / 16; ++kk) {
      const int key = dq_key0 + kk * 16;
      wgmma::mma_m64n64k16_ss<Element, true, true>(
          dq, wgmma::make_descriptor(ds_address + key * kRow, wgmma::kGroupBytes),
          wgmma::make_descriptor(k_address + dq_slab * (kBlockN * kRow) + key * kRow, wgmma::kGroupBytes),
          kk > 0);
    }
    wgmma::commit_group();
    wgmma::wait_group<0>();
    wgmma::fence_operands(dq);
    float* dq_accum =
        params.dq_accum +
        ((static_cast<int64_t>(block.batch) * fwd.q_len + q_start) * fwd.heads + head) * kHeadDim;
    const int64_t dq_row_stride = static_cast<int64_t>(fwd.heads) * kHeadDim;
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = warp_row0 + accumulator_row(lane, e);
        if (q_start + row < fwd.q_len) {
          atomicAdd(dq_accum + row * dq_row_stride + dq_slab * 64 + nt * 8 + accumulator_col(lane, e),
                    dq[nt][e] * fwd.softmax_scale);
        }
      }
    }
    __syncthreads();  // dSᵀ and this stage are free again
  }

  // This block owns these keys: no atomics.
  add_key_gradients(params, block, warpgroup * 64 + warp_row0, lane, dk, dv);
}

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_BWD_WGMMA_KERNEL_CUH_
