// ZeRO stages against the framework and the pipeline: which data-parallel sharding each framework runs
// under pipeline parallelism, each refusal citing the framework.
#include <fmt/format.h>

#include "sim/config/plan_rules_groups.h"

namespace trainsim::config::internal {
namespace {

// ZeRO-2 or ZeRO-3 under pipeline parallelism.
bool sharded_pipeline(const Parallelism& p) { return p.zero_stage >= 2 && p.pp > 1; }

}  // namespace

void add_zero_rules(std::vector<PlanRule>& rules) {
  rules.push_back({"torchtitan-shards-with-fsdp",
                   {"parallelism.zero_stage", "framework"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const int zero = s.parallelism.zero_stage;
                     if (s.framework != Framework::kTorchtitan || (zero != 1 && zero != 2)) return {};
                     return fmt::format(
                         "torchtitan shards data-parallel state with FSDP2 only: zero_stage 3 (with "
                         "reshard_after_forward: false to keep parameters gathered from forward to "
                         "backward), or 0 to replicate; got {}",
                         zero);
                   }});
  rules.push_back({"deepspeed-pipeline-refuses-zero-2-3",
                   {"parallelism.zero_stage", "parallelism.pp"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (!sharded_pipeline(s.parallelism) || !deepspeed_framework(s.framework)) return {};
                     return fmt::format(
                         "DeepSpeed's pipeline engine refuses ZeRO-2 and ZeRO-3 (deepspeed/runtime/pipe/"
                         "engine.py); use zero_stage 0 or 1 with pp {}, or pp: 1",
                         s.parallelism.pp);
                   }});
  rules.push_back({"sharded-pipeline-as-torchtitan",
                   {"parallelism.zero_stage", "framework"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (!sharded_pipeline(p) || deepspeed_framework(s.framework) ||
                         s.framework == Framework::kTorchtitan) {
                       return {};
                     }
                     return fmt::format(
                         "zero_stage {} with pp {} is modelled as torchtitan runs it (FSDP2 under "
                         "torch.distributed.pipelining); set framework: torchtitan and zero_stage: 3, or use "
                         "zero_stage 0 or 1{}",
                         p.zero_stage, p.pp,
                         megatron_framework(s.framework) ? " (Megatron's distributed optimizer)" : "");
                   }});
  rules.push_back(
      {"fsdp-pipeline-without-split-backward",
       {"parallelism.schedule", "parallelism.zero_stage"},
       kParallelismSection,
       [](const Scenario& s) -> std::optional<Breach> {
         const Parallelism& p = s.parallelism;
         if (s.framework != Framework::kTorchtitan || p.zero_stage != 3 || p.pp == 1 ||
             !split_backward_schedule(p.schedule)) {
           return {};
         }
         return fmt::format(
             "zero_stage 3 with schedule {} is not modelled (the weight-gradient passes would have "
             "to precede FSDP's reduce-scatter); use 1f1b, interleaved or gpipe",
             to_string(p.schedule));
       }});
  rules.push_back(
      {"fsdp-pipeline-keeps-parameters",
       {"parallelism.reshard_after_forward", "parallelism.pp"},
       kParallelismSection,
       [](const Scenario& s) -> std::optional<Breach> {
         const Parallelism& p = s.parallelism;
         if (s.framework != Framework::kTorchtitan || p.zero_stage != 3 || p.pp == 1 ||
             split_backward_schedule(p.schedule) || !s.reshard_after_forward()) {
           return {};
         }
         return fmt::format(
             "reshard_after_forward: true with pp {} is not modelled (FSDP2 under pipelining then "
             "reshards after some uses and not others); use false, torchtitan's default with "
             "pipeline parallelism",
             p.pp);
       }});
  rules.push_back({"reshard-needs-zero-3",
                   {"parallelism.reshard_after_forward", "parallelism.zero_stage"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (!p.reshard_after_forward.has_value() || p.zero_stage == 3) return {};
                     return fmt::format(
                         "reshard_after_forward is a ZeRO-3 / FSDP setting; remove it or set zero_stage: 3 "
                         "(got {})",
                         p.zero_stage);
                   }});
}

}  // namespace trainsim::config::internal
