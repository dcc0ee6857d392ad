#include "sim/config/presets.h"

#include <set>

#include <gtest/gtest.h>

namespace trainsim::config {
namespace {

TEST(Presets, NamesAreUniqueAndShapesConsistent) {
  std::set<std::string_view> names;
  for (const ModelPreset& p : model_presets()) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    const Model& m = p.model;
    EXPECT_EQ(m.preset, p.name);
    EXPECT_GT(m.layers, 0) << p.name;
    EXPECT_EQ(m.heads % m.kv_heads, 0) << p.name;
    // Qwen3 projects its hidden size of 2048 to 32 heads of 128, DeepSeek's latents to 128 heads.
    if (p.name != "qwen3-30b-a3b" && p.name != "qwen3-235b-a22b" && !m.mla.enabled()) {
      EXPECT_EQ(m.heads * m.head_dim, m.hidden) << p.name;
    }
    if (m.mla.enabled()) {
      EXPECT_EQ(m.kv_heads, m.heads) << p.name;
      EXPECT_FALSE(m.linear_bias) << p.name;
    }
    EXPECT_FALSE(p.citation.empty()) << p.name;
  }
  EXPECT_GE(model_presets().size(), 30u);
}

TEST(Presets, PublishedShapes) {
  const Model& gpt3 = find_model_preset("gpt3-175b")->model;
  EXPECT_EQ(gpt3.layers, 96);
  EXPECT_EQ(gpt3.hidden, 12288);
  EXPECT_EQ(gpt3.heads, 96);
  EXPECT_EQ(gpt3.vocab, 50257);
  const Model& llama = find_model_preset("llama3-8b")->model;
  EXPECT_EQ(llama.kv_heads, 8);
  EXPECT_EQ(llama.ffn_hidden, 14336);
  EXPECT_EQ(llama.vocab, 128256);
  EXPECT_EQ(llama.activation, Activation::kSwiglu);
  EXPECT_FALSE(llama.tied_embeddings);
  const Model& big = find_model_preset("llama3-405b")->model;
  EXPECT_EQ(big.layers, 126);
  EXPECT_EQ(big.hidden, 16384);
  EXPECT_EQ(big.ffn_hidden, 53248);
  const Model& trillion = find_model_preset("megatron-1t")->model;
  EXPECT_EQ(trillion.layers, 128);
  EXPECT_EQ(trillion.hidden, 25600);
  EXPECT_EQ(trillion.heads, 160);
  EXPECT_EQ(trillion.vocab, 51200);
  EXPECT_EQ(find_model_preset("gpt-neox-20b")->model.vocab, 50432);
  EXPECT_EQ(find_model_preset("nope"), nullptr);
}

TEST(Presets, EveryFamilyIsThere) {
  for (const char* name : {"gpt3-125m", "gpt3-1.3b", "gpt3-175b", "megatron-1.7b", "megatron-22b",
                           "megatron-530b", "megatron-1t", "llama2-7b", "llama2-13b", "llama2-70b",
                           "llama3-8b", "llama3-70b", "llama3-405b", "gpt-neox-125m", "gpt-neox-20b"}) {
    EXPECT_NE(find_model_preset(name), nullptr) << name;
  }
}

TEST(Presets, MixturesOfExperts) {
  const Model& mixtral = find_model_preset("mixtral-8x7b")->model;
  EXPECT_EQ(mixtral.moe.experts, 8);
  EXPECT_EQ(mixtral.moe.top_k, 2);
  EXPECT_EQ(mixtral.moe.expert_ffn_hidden, 14336);
  const Model& qwen = find_model_preset("qwen3-30b-a3b")->model;
  EXPECT_EQ(qwen.moe.experts, 128);
  EXPECT_EQ(qwen.moe.top_k, 8);
  EXPECT_EQ(qwen.moe.expert_ffn_hidden, 768);
  EXPECT_EQ(qwen.heads * qwen.head_dim, 4096);  // 32 heads of 128 on a hidden size of 2048
  const Model& qwen_large = find_model_preset("qwen3-235b-a22b")->model;
  EXPECT_EQ(qwen_large.layers, 94);
  EXPECT_EQ(qwen_large.moe.expert_ffn_hidden, 1536);
  EXPECT_EQ(qwen_large.heads * qwen_large.head_dim, 8192);  // 64 heads of 128 on a hidden size of 4096
  const Model& deepseek = find_model_preset("deepseek-moe-16b")->model;
  EXPECT_EQ(deepseek.moe.shared_experts, 2);
  EXPECT_EQ(deepseek.moe.dense_layers, 1);
  EXPECT_FALSE(deepseek.moe_layer(0));
  EXPECT_TRUE(deepseek.moe_layer(1));
  EXPECT_FALSE(find_model_preset("llama3-8b")->model.moe.enabled());
}

TEST(Presets, LatentAttention) {
  const Model& v3 = find_model_preset("deepseek-v3")->model;
  EXPECT_EQ(v3.mla.kv_lora_rank, 512);
  EXPECT_EQ(v3.mla.q_lora_rank, 1536);
  EXPECT_EQ(v3.mla.rope_head_dim, 64);
  EXPECT_EQ(v3.mla.v_head_dim, 128);
  EXPECT_EQ(v3.moe.experts, 256);
  EXPECT_EQ(v3.moe.dense_layers, 3);
  EXPECT_EQ(find_model_preset("deepseek-v2-lite")->model.mla.q_lora_rank, 0);  // queries without a latent
  EXPECT_FALSE(find_model_preset("deepseek-moe-16b")->model.mla.enabled());
}

}  // namespace
}  // namespace trainsim::config
