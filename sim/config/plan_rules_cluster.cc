// The degrees, the batch and the stragglers against the cluster; the training dtype against the
// hardware.
#include <limits>

#include <fmt/format.h>

#include "sim/config/plan_rules_groups.h"

namespace trainsim::config::internal {
namespace {

constexpr unsigned kBatchReads = kTrainingSection | kParallelismSection | kClusterGpus;

// GPUs per node for naming straggler nodes (node = rank / GPUs per node).
int64_t gpus_per_node(const Scenario& s) { return std::max<int64_t>(1, s.cluster.topology.node.gpus); }

// The first of `ids` at or above `count`, with its index, or nothing.
std::optional<std::pair<size_t, int64_t>> first_outside(const std::vector<int64_t>& ids, int64_t count) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= count) return std::make_pair(i, ids[i]);
  }
  return std::nullopt;
}

// A straggler entry's node outside the cluster: located at `list`[index].
std::optional<Breach> node_outside(const Scenario& s, const std::vector<int64_t>& nodes,
                                   const std::string& list) {
  const int64_t per_node = gpus_per_node(s);
  const int64_t count = (s.cluster.gpus + per_node - 1) / per_node;
  const auto outside = first_outside(nodes, count);
  if (!outside) return {};
  return Breach(fmt::format("node {} is not in this cluster ({} GPUs of {} per node: nodes 0 to {})",
                            outside->second, s.cluster.gpus, per_node, count - 1),
                fmt::format("{}[{}]", list, outside->first));
}

// The micro-batches per replica, global_batch / (micro_batch·dp); nothing when that does not divide
// (rule micro-batches-fill-global-batch).
std::optional<int64_t> micro_batches_per_replica(const Scenario& s) {
  if (s.training.global_batch % (s.training.micro_batch * s.parallelism.dp) != 0) return std::nullopt;
  return s.micro_batches();
}

}  // namespace

void add_cluster_rules(std::vector<PlanRule>& rules) {
  rules.push_back(
      {"gpus-fit-topology",
       {"cluster.gpus", "cluster.topology"},
       kClusterGpus | kClusterFiles,
       [](const Scenario& s) -> std::optional<Breach> {
         const Topology& t = s.cluster.topology;
         if (s.cluster.gpus <= t.total_gpus()) return {};
         return fmt::format(
             "{} GPUs requested but topology {} has {} ({} nodes of {}); use a larger topology or "
             "fewer GPUs",
             s.cluster.gpus, t.name, t.total_gpus(), t.fabric.nodes, t.node.gpus);
       }});
  rules.push_back({"degrees-multiply-to-gpus",
                   {"parallelism.dp", "cluster.gpus"},
                   kParallelismSection | kClusterGpus,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     const int64_t model_parallel = p.tp * p.pp * p.sp;  // at most kMaxGpus^3 = 2^60
                     int64_t world = 0;
                     if (__builtin_mul_overflow(model_parallel, p.dp, &world)) {
                       world = std::numeric_limits<int64_t>::max();
                     }
                     if (world == s.cluster.gpus) return {};
                     return fmt::format(
                         "tp·pp·dp·sp = {}·{}·{}·{} = {} GPUs but cluster.gpus is {}; change dp to {} or "
                         "cluster.gpus to {}",
                         p.tp, p.pp, p.dp, p.sp, world, s.cluster.gpus,
                         s.cluster.gpus % model_parallel == 0
                             ? fmt::format("{}", s.cluster.gpus / model_parallel)
                             : std::string("a value that fits"),
                         world);
                   }});
  rules.push_back({"micro-batches-fill-global-batch",
                   {"training.global_batch", "training.micro_batch"},
                   kBatchReads,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Training& t = s.training;
                     const int64_t per_step = t.micro_batch * s.parallelism.dp;
                     if (t.global_batch % per_step == 0) return {};
                     return fmt::format("global_batch {} must be a multiple of micro_batch·dp = {}·{} = {}",
                                        t.global_batch, t.micro_batch, s.parallelism.dp, per_step);
                   }});
  rules.push_back(
      {"micro-batches-multiple-of-pp",
       {"training.global_batch", "parallelism.pp"},
       kBatchReads,
       [](const Scenario& s) -> std::optional<Breach> {
         const Parallelism& p = s.parallelism;
         const std::optional<int64_t> m = micro_batches_per_replica(s);
         if (!micro_batches_multiple_of_pp(p.schedule, p.vpp) || !m || *m % p.pp == 0) return {};
         return fmt::format(
             "the {} schedule with vpp {} needs the {} micro-batches per replica to be a multiple of "
             "pp {} (Megatron's rule); change global_batch or micro_batch",
             to_string(p.schedule), p.vpp, *m, p.pp);
       }});
  rules.push_back(
      {"dualpipev-micro-batches",
       {"training.global_batch", "parallelism.pp"},
       kBatchReads,
       [](const Scenario& s) -> std::optional<Breach> {
         const Parallelism& p = s.parallelism;
         const std::optional<int64_t> m = micro_batches_per_replica(s);
         if (p.schedule != Schedule::kDualPipeV || !m || *m >= min_micro_batches(p.schedule, p.pp)) return {};
         return fmt::format(
             "the dualpipev schedule needs at least 2·pp = {} micro-batches per replica (DeepSeek's "
             "rule), got {}; raise global_batch or lower micro_batch",
             min_micro_batches(p.schedule, p.pp), *m);
       }});
  rules.push_back(
      {"dtype-on-hardware",
       {"training.dtype", "cluster.hardware"},
       kTrainingSection | kClusterFiles,
       [](const Scenario& s) -> std::optional<Breach> {
         // fp8 training runs attention and the LM head in bf16 (storage_dtype).
         for (const Dtype needed : {s.training.dtype, storage_dtype(s.training.dtype)}) {
           if (s.cluster.hardware.peak_flops_per_s(needed)) continue;
           return fmt::format(
               "the hardware profile {} has no peak FLOP rate for {}; choose another dtype or add "
               "gpu.peak_flops.{} to the profile",
               s.cluster.hardware.name, to_string(needed), to_string(needed));
         }
         return {};
       }});
  rules.push_back(
      {"stragglers-in-cluster",
       {"stragglers", "cluster.gpus"},
       kClusterGpus | kStragglersSection,
       [](const Scenario& s) -> std::optional<Breach> {
         const std::vector<SlowGpus>& slow = s.stragglers.slow_gpus;
         for (size_t i = 0; i < slow.size(); ++i) {
           const std::string entry = fmt::format("stragglers.slow_gpus[{}]", i);
           if (const auto rank = first_outside(slow[i].ranks, s.cluster.gpus)) {
             return Breach(fmt::format("rank {} is not in this cluster (cluster.gpus {}: ranks 0 to {})",
                                       rank->second, s.cluster.gpus, s.cluster.gpus - 1),
                           fmt::format("{}.ranks[{}]", entry, rank->first));
           }
           if (auto node = node_outside(s, slow[i].nodes, entry + ".nodes")) return node;
         }
         const std::vector<SlowNics>& nics = s.stragglers.slow_nics;
         for (size_t i = 0; i < nics.size(); ++i) {
           if (auto node = node_outside(s, nics[i].nodes, fmt::format("stragglers.slow_nics[{}].nodes", i))) {
             return node;
           }
         }
         return {};
       }});
}

}  // namespace trainsim::config::internal
