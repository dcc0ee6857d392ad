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
  const BwdShared<char> shared =
      bwd_shared<Traits::kKvBytes, Traits::kQBytes, Traits::kDsBytes, kBlockM>(smem);
  const uint32_t k_address = ptx::shared_address(shared.k);
  const uint32_t v_address = ptx::shared_address(shared.v);
  const uint32_t q_address = ptx::shared_address(shared.q);
  const uint32_t do_address = ptx::shared_address(shared.dout);
  const uint32_t ds_address = ptx::shared_address(shared.ds);

  // Starts the loads of task t (query head, query tile) into `stage`.
  auto load_task = [&](int t, int stage) {
    const TaskInputs<Element> in =
        task_inputs<Element, kBlockM>(params, block.batch, tasks.head(t), tasks.q_start(t));
    load_swizzled_async<kBlockM, kHeadDim, kThreads>(shared.q + stage * Traits::kQBytes, in.q,
                                                     fwd.q_strides.row, in.valid, tid);
    load_swizzled_async<kBlockM, kHeadDim, kThreads>(shared.dout + stage * Traits::kQBytes, in.dout,
                                                     params.dout_strides.row, in.valid, tid);
    load_floats_async<kThreads>(shared.lse + stage * kBlockM, in.lse, kBlockM, in.valid, tid);
    load_floats_async<kThreads>(shared.delta + stage * kBlockM, in.delta, kBlockM, in.valid, tid);
  };

  load_swizzled_async<kBlockN, kHeadDim, kThreads>(shared.k, block.k, fwd.k_strides.row, block.kv_rows, tid);
  load_swizzled_async<kBlockN, kHeadDim, kThreads>(shared.v, block.v, fwd.v_strides.row, block.kv_rows, tid);
  load_task(0, 0);
  ptx::cp_async_commit();

  float dk[kHeadDim / 8][4] = {};
  float dv[kHeadDim / 8][4] = {};
  const uint32_t wg_keys = warpgroup * 64 * kRow;  // this warpgroup's rows in a K/V slab
  // dQ: this warpgroup's output slab and keys.
  const int dq_slab = warpgroup % kSlabs;
  const int dq_key0 = (warpgroup / kSlabs) * (kBlockN / Traits::kKeySplits);

  for (int t = 0; t < tasks.count; ++t) {
    const int stage = t & 1;
    load_next_and_wait(t, tasks.count, load_task);
    wgmma::fence_proxy_async();
    __syncthreads();
    const int head = tasks.head(t);
    const int q_start = tasks.q_start(t);
    const uint32_t tile_q = q_address + stage * Traits::kQBytes;
    const uint32_t tile_do = do_address + stage * Traits::kQBytes;
    const float* tile_lse = shared.lse + stage * kBlockM;
    const float* tile_delta = shared.delta + stage * kBlockM;

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

    // Pᵀ = exp(scale·Sᵀ - lse) and dSᵀ = Pᵀ ∘ (dPᵀ - delta), in place.
    recompute_probabilities(p, fwd, block, warpgroup * 64 + warp_row0, q_start, tile_lse, lane);
    score_gradients(ds, p, tile_delta, lane);

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
        *reinterpret_cast<uint32_t*>(shared.ds + wgmma::swizzled_offset(key, nt) + ((lane & 3) << 2)) =
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
    add_query_gradients<kHeadDim>(params, block, head, q_start, warp_row0, dq_slab * 64, lane, dq);
    __syncthreads();  // dSᵀ and this stage are free again
  }

  // This block owns these keys: no atomics.
  add_key_gradients(params, block, warpgroup * 64 + warp_row0, lane, dk, dv);
}

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_BWD_WGMMA_KERNEL_CUH_
