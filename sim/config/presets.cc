#include "sim/config/presets.h"

namespace trainsim::config {
namespace {

struct Shape {
  int64_t layers, hidden, heads, kv_heads, head_dim, ffn_hidden, vocab, seq_len;
};

// GPT-style: GeLU MLP of 4h, LayerNorm, learned positions, tied embeddings, biases.
Model gpt(std::string_view name, Shape s) {
  Model m;
  m.preset = name;
  m.layers = s.layers;
  m.hidden = s.hidden;
  m.heads = s.heads;
  m.kv_heads = s.kv_heads;
  m.head_dim = s.head_dim;
  m.ffn_hidden = s.ffn_hidden;
  m.vocab = s.vocab;
  m.seq_len = s.seq_len;
  return m;
}

// A Llama-style model whose MLPs are mixtures of experts.
Model moe(Model m, Moe experts) {
  m.moe = experts;
  return m;
}

// A DeepSeek model: MoE layers and multi-head latent attention.
Model deepseek(Model m, Moe experts, Mla attention) {
  m.moe = experts;
  m.mla = attention;
  return m;
}

// GPT-NeoX: as GPT but rotary positions and untied embeddings.
Model neox(std::string_view name, Shape s) {
  Model m = gpt(name, s);
  m.position_embedding = PositionEmbedding::kRope;
  m.tied_embeddings = false;
  return m;
}

// Llama: SwiGLU MLP, RMSNorm, rotary positions, untied embeddings, no biases.
Model llama(std::string_view name, Shape s) {
  Model m = gpt(name, s);
  m.activation = Activation::kSwiglu;
  m.norm = Norm::kRmsNorm;
  m.position_embedding = PositionEmbedding::kRope;
  m.tied_embeddings = false;
  m.linear_bias = false;
  return m;
}

constexpr std::string_view kGpt3 =
    "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1 (vocab 50257, context 2048)";
constexpr std::string_view kNarayanan =
    "Narayanan et al. 2021 (SC'21), Efficient Large-Scale Language Model Training on GPU Clusters, "
    "Table 1 (V = 51200, s = 2048)";
constexpr std::string_view kKorthikanti =
    "Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer Models, Table 3";
constexpr std::string_view kLlama2 = "Touvron et al. 2023, Llama 2, Table 1 and the released config.json";
constexpr std::string_view kLlama3 = "Llama Team 2024, The Llama 3 Herd of Models, Table 3 and config.json";
constexpr std::string_view kMixtral =
    "Jiang et al. 2024, Mixtral of Experts (arXiv 2401.04088), and the released config.json "
    "(mistralai/Mixtral-8x7B-v0.1, Mixtral-8x22B-v0.1); seq_len 4096 as Megatron-Core's MoE recipes";
constexpr std::string_view kQwen3Moe =
    "Qwen/Qwen3-30B-A3B config.json (128 experts, top 8, moe_intermediate_size 768, no shared expert); "
    "seq_len 4096 as Megatron-Core's MoE recipes";
constexpr std::string_view kQwen3MoeLarge =
    "Qwen/Qwen3-235B-A22B config.json (94 layers, hidden 4096, 64 query and 4 key/value heads of 128, "
    "128 experts, top 8, moe_intermediate_size 1536, no shared expert); seq_len 4096 as for 30B-A3B";
constexpr std::string_view kDeepSeekMoe =
    "Dai et al. 2024, DeepSeekMoE (arXiv 2401.06066), and deepseek-ai/deepseek-moe-16b-base config.json "
    "(64 routed + 2 shared experts of 1408, top 6, first layer dense of 10944)";
constexpr std::string_view kDeepSeekV2 =
    "DeepSeek-AI 2024, DeepSeek-V2 (arXiv 2405.04434), Sec. 3.1 and the released config.json of "
    "deepseek-ai/DeepSeek-V2 and DeepSeek-V2-Lite (MLA: kv_lora_rank 512, qk_rope_head_dim 64, q_lora_rank "
    "1536 or none; 160/64 routed + 2 shared experts, top 6, first layer dense); pre-training seq_len 4096";
constexpr std::string_view kDeepSeekV3 =
    "DeepSeek-AI 2024, DeepSeek-V3 Technical Report (arXiv 2412.19437), Sec. 4.2 and config.json (MLA as "
    "V2; 256 routed + 1 shared expert of 2048, top 8, first 3 layers dense; the multi-token prediction "
    "module is not part of the preset); pre-training seq_len 4096";
constexpr std::string_view kNeox = "EleutherAI/gpt-neox configs/*.yml (vocab padded to 50304; 20B: 50432)";

std::vector<ModelPreset> make_presets() {
  std::vector<ModelPreset> p;
  const auto add = [&p](std::string_view name, std::string_view citation, Model m) {
    p.push_back({name, citation, std::move(m)});
  };
  // GPT-3. The paper lists 24 heads of 128 for the 1.3B model, which do not tile d_model 2048;
  // public reproductions use 16 heads of 128, as here. The 13B row's d_model 5140 is a typo for
  // 5120 = 40 heads x 128.
  add("gpt3-125m", kGpt3, gpt("gpt3-125m", {12, 768, 12, 12, 64, 3072, 50257, 2048}));
  add("gpt3-350m", kGpt3, gpt("gpt3-350m", {24, 1024, 16, 16, 64, 4096, 50257, 2048}));
  add("gpt3-760m", kGpt3, gpt("gpt3-760m", {24, 1536, 16, 16, 96, 6144, 50257, 2048}));
  add("gpt3-1.3b", kGpt3, gpt("gpt3-1.3b", {24, 2048, 16, 16, 128, 8192, 50257, 2048}));
  add("gpt3-2.7b", kGpt3, gpt("gpt3-2.7b", {32, 2560, 32, 32, 80, 10240, 50257, 2048}));
  add("gpt3-6.7b", kGpt3, gpt("gpt3-6.7b", {32, 4096, 32, 32, 128, 16384, 50257, 2048}));
  add("gpt3-13b", kGpt3, gpt("gpt3-13b", {40, 5120, 40, 40, 128, 20480, 50257, 2048}));
  add("gpt3-175b", kGpt3, gpt("gpt3-175b", {96, 12288, 96, 96, 128, 49152, 50257, 2048}));
  // Megatron weak-scaling series (Narayanan Table 1) and Korthikanti's 22B.
  const auto megatron = [&](std::string_view name, int64_t heads, int64_t hidden, int64_t layers,
                            std::string_view citation) {
    add(name, citation, gpt(name, {layers, hidden, heads, heads, hidden / heads, 4 * hidden, 51200, 2048}));
  };
  megatron("megatron-1.7b", 24, 2304, 24, kNarayanan);
  megatron("megatron-3.6b", 32, 3072, 30, kNarayanan);
  megatron("megatron-7.5b", 32, 4096, 36, kNarayanan);
  megatron("megatron-18.4b", 48, 6144, 40, kNarayanan);
  megatron("megatron-22b", 64, 6144, 48, kKorthikanti);
  megatron("megatron-39.1b", 64, 8192, 48, kNarayanan);
  megatron("megatron-76.1b", 80, 10240, 60, kNarayanan);
  megatron("megatron-145.6b", 96, 12288, 80, kNarayanan);
  megatron("megatron-175b", 96, 12288, 96, kKorthikanti);
  megatron("megatron-310.1b", 128, 16384, 96, kNarayanan);
  megatron("megatron-530b", 128, 20480, 105, kKorthikanti);
  megatron("megatron-1t", 160, 25600, 128, kNarayanan);
  // Llama 2 and 3 (3.1 for 405B).
  add("llama2-7b", kLlama2, llama("llama2-7b", {32, 4096, 32, 32, 128, 11008, 32000, 4096}));
  add("llama2-13b", kLlama2, llama("llama2-13b", {40, 5120, 40, 40, 128, 13824, 32000, 4096}));
  add("llama2-70b", kLlama2, llama("llama2-70b", {80, 8192, 64, 8, 128, 28672, 32000, 4096}));
  add("llama3-8b", kLlama3, llama("llama3-8b", {32, 4096, 32, 8, 128, 14336, 128256, 8192}));
  add("llama3-70b", kLlama3, llama("llama3-70b", {80, 8192, 64, 8, 128, 28672, 128256, 8192}));
  add("llama3-405b", kLlama3, llama("llama3-405b", {126, 16384, 128, 8, 128, 53248, 128256, 8192}));
  // Mixtures of experts: {experts, top_k, expert_ffn_hidden, shared_experts, capacity_factor,
  // dense_layers}.
  add("mixtral-8x7b", kMixtral,
      moe(llama("mixtral-8x7b", {32, 4096, 32, 8, 128, 14336, 32000, 4096}), {8, 2, 14336, 0, 1.0, 0}));
  add("mixtral-8x22b", kMixtral,
      moe(llama("mixtral-8x22b", {56, 6144, 48, 8, 128, 16384, 32000, 4096}), {8, 2, 16384, 0, 1.0, 0}));
  add("qwen3-30b-a3b", kQwen3Moe,
      moe(llama("qwen3-30b-a3b", {48, 2048, 32, 4, 128, 6144, 151936, 4096}), {128, 8, 768, 0, 1.0, 0}));
  add("qwen3-235b-a22b", kQwen3MoeLarge,
      moe(llama("qwen3-235b-a22b", {94, 4096, 64, 4, 128, 12288, 151936, 4096}), {128, 8, 1536, 0, 1.0, 0}));
  add("deepseek-moe-16b", kDeepSeekMoe,
      moe(llama("deepseek-moe-16b", {28, 2048, 16, 16, 128, 10944, 102400, 4096}), {64, 6, 1408, 2, 1.0, 1}));
  // Multi-head latent attention: {kv_lora_rank, q_lora_rank, rope_head_dim, v_head_dim}.
  add("deepseek-v2-lite", kDeepSeekV2,
      deepseek(llama("deepseek-v2-lite", {27, 2048, 16, 16, 128, 10944, 102400, 4096}),
               {64, 6, 1408, 2, 1.0, 1}, {512, 0, 64, 128}));
  add("deepseek-v2", kDeepSeekV2,
      deepseek(llama("deepseek-v2", {60, 5120, 128, 128, 128, 12288, 102400, 4096}),
               {160, 6, 1536, 2, 1.0, 1}, {512, 1536, 64, 128}));
  add("deepseek-v3", kDeepSeekV3,
      deepseek(llama("deepseek-v3", {61, 7168, 128, 128, 128, 18432, 129280, 4096}),
               {256, 8, 2048, 1, 1.0, 3}, {512, 1536, 64, 128}));
  // GPT-NeoX configurations (the sizes the communication-characteristics study draws from).
  add("gpt-neox-125m", kNeox, neox("gpt-neox-125m", {12, 768, 12, 12, 64, 3072, 50304, 2048}));
  add("gpt-neox-350m", kNeox, neox("gpt-neox-350m", {24, 1024, 16, 16, 64, 4096, 50304, 2048}));
  add("gpt-neox-760m", kNeox, neox("gpt-neox-760m", {24, 1536, 16, 16, 96, 6144, 50304, 2048}));
  add("gpt-neox-1.3b", kNeox, neox("gpt-neox-1.3b", {24, 2048, 16, 16, 128, 8192, 50304, 2048}));
  add("gpt-neox-2.7b", kNeox, neox("gpt-neox-2.7b", {32, 2560, 32, 32, 80, 10240, 50304, 2048}));
  add("gpt-neox-6.7b", kNeox, neox("gpt-neox-6.7b", {32, 4096, 32, 32, 128, 16384, 50304, 2048}));
  add("gpt-neox-13b", kNeox, neox("gpt-neox-13b", {40, 5120, 40, 40, 128, 20480, 50304, 2048}));
  add("gpt-neox-20b", kNeox, neox("gpt-neox-20b", {44, 6144, 64, 64, 96, 24576, 50432, 2048}));
  return p;
}

}  // namespace

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> kPresets = make_presets();
  return kPresets;
}

const ModelPreset* find_model_preset(std::string_view name) {
  for (const ModelPreset& preset : model_presets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

}  // namespace trainsim::config
