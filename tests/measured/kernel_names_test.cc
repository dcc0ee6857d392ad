#include "sim/measured/kernel_names.h"

#include <gtest/gtest.h>

namespace trainsim::measured {
namespace {

TEST(ClassifyKernel, NamesFromRealProfiles) {
  const struct {
    const char* name;
    ActivityClass cls;
  } cases[] = {
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       ActivityClass::kAllReduce},
      {"ncclKernel_AllReduce_RING_LL_Sum_half(ncclWorkElem)", ActivityClass::kAllReduce},
      {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", ActivityClass::kAllGather},
      {"ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       ActivityClass::kReduceScatter},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", ActivityClass::kSendRecv},
      {"ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)", ActivityClass::kOtherCollective},
      {"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)", ActivityClass::kSendRecv},
      {"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
       "cutlass::bfloat16_t>>",
       ActivityClass::kAttention},
      {"fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t>"
       ")",
       ActivityClass::kAttention},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
       ActivityClass::kAttention},
      {"nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN", ActivityClass::kGemm},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off",
       ActivityClass::kGemm},
      {"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", ActivityClass::kGemm},
      {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>",
       ActivityClass::kGemm},
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor<float, 4>>",
       ActivityClass::kOptimizer},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>",
       ActivityClass::kMemory},
      {"void cuApplyLayerNorm<c10::BFloat16, float, c10::BFloat16>", ActivityClass::kMemory},
      {"scaled_masked_softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 11>", ActivityClass::kMemory},
  };
  for (const auto& c : cases) EXPECT_EQ(classify_kernel(c.name), c.cls) << c.name;
}

TEST(ClassifyCopy, HostSideOrDevice) {
  EXPECT_EQ(classify_copy("Memcpy HtoD (Pinned -> Device)"), ActivityClass::kHostCopy);
  EXPECT_EQ(classify_copy("Memcpy DtoH (Device -> Pageable)"), ActivityClass::kHostCopy);
  EXPECT_EQ(classify_copy("Memcpy DtoD (Device -> Device)"), ActivityClass::kMemory);
  EXPECT_EQ(classify_copy("Memcpy PtoP (Device -> Device)"), ActivityClass::kMemory);
}

TEST(CollectiveKind, PyTorchNamesAsTheSimulatorNamesThem) {
  EXPECT_EQ(collective_kind("allreduce"), "all_reduce");
  EXPECT_EQ(collective_kind("_allgather_base"), "all_gather");
  EXPECT_EQ(collective_kind("reduce_scatter_tensor_coalesced"), "reduce_scatter");
  EXPECT_EQ(collective_kind("all_to_allv"), "all_to_all");
  EXPECT_EQ(collective_kind("Broadcast"), "broadcast");
  EXPECT_EQ(collective_kind("send"), "send");
  EXPECT_EQ(collective_kind("recv"), "recv");
  EXPECT_EQ(collective_kind("gather"), "");
}

}  // namespace
}  // namespace trainsim::measured
