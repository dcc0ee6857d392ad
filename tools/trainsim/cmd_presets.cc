// trainsim presets: the published model shapes a scenario can name with `model.preset`.
#include <iostream>

#include <fmt/format.h>

#include "sim/config/presets.h"
#include "sim/config/units.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {

void register_presets(CLI::App& app, Context& context) {
  CLI::App* cmd = app.add_subcommand("presets", "List the model presets and where their shapes come from");
  auto with_sources = std::make_shared<bool>(false);
  cmd->add_flag("--sources", *with_sources, "Also print the citation of each preset");
  cmd->callback([with_sources, &context] {
    // latent: MLA's kv / q latent ranks ("-": standard attention). experts: routed / top-k (+ shared)
    // of the MoE layers, and the expert's ffn.
    std::cout << fmt::format("{:<16} {:>6} {:>6} {:>6} {:>6} {:>5} {:>7} {:>7} {:>6} {:<7} {:<9} {}\n",
                             "# preset", "layers", "hidden", "heads", "kv", "d", "ffn", "vocab", "seq", "mlp",
                             "latent", "experts");
    for (const config::ModelPreset& p : config::model_presets()) {
      const config::Model& m = p.model;
      std::string experts = "-";
      if (m.moe.enabled()) {
        experts = fmt::format("{}/{}", m.moe.experts, m.moe.top_k);
        if (m.moe.shared_experts > 0) experts += fmt::format("+{}", m.moe.shared_experts);
        experts += fmt::format(" x {}", m.moe.expert_ffn_hidden);
      }
      std::string latent = "-";
      if (m.mla.enabled()) latent = fmt::format("{}/{}", m.mla.kv_lora_rank, m.mla.q_lora_rank);
      std::cout << fmt::format("{:<16} {:>6} {:>6} {:>6} {:>6} {:>5} {:>7} {:>7} {:>6} {:<7} {:<9} {}\n",
                               p.name, m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn_hidden,
                               m.vocab, config::format_count(m.seq_len), config::to_string(m.activation),
                               latent, experts);
      if (*with_sources) std::cout << fmt::format("#   {}\n", p.citation);
    }
    context.exit_code = kExitOk;
  });
}

}  // namespace trainsim::cli
