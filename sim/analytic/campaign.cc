#include "sim/analytic/campaign.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "sim/analytic/params.h"
#include "sim/config/units.h"
#include "sim/workload/model_state.h"

namespace trainsim::analytic {

double optimal_checkpoint_interval_s(double checkpoint_s, double mtbi_s) {
  if (checkpoint_s >= 2 * mtbi_s) return mtbi_s;
  const double x = checkpoint_s / (2 * mtbi_s);
  return std::sqrt(2 * checkpoint_s * mtbi_s) * (1 + std::sqrt(x) / 3 + x / 9) - checkpoint_s;
}

double expected_wall_time_s(double work_s, double interval_s, double checkpoint_s, double restart_s,
                            double mtbi_s) {
  if (mtbi_s <= 0) return work_s * (1 + checkpoint_s / interval_s);
  const double wall = mtbi_s * std::exp(restart_s / mtbi_s) *
                      std::expm1((interval_s + checkpoint_s) / mtbi_s) * work_s / interval_s;
  return std::isfinite(wall) ? wall : std::numeric_limits<double>::infinity();
}

CampaignEstimate estimate_campaign(const config::Scenario& s, double iteration_s,
                                   double training_host_bytes_per_node) {
  const config::Campaign& c = s.campaign;
  const auto gpus = static_cast<double>(s.cluster.gpus);
  CampaignEstimate e;
  e.tokens = c.tokens;
  const auto tokens_per_iteration = static_cast<double>(s.training.global_batch * s.model.seq_len);
  e.iterations = static_cast<int64_t>(std::ceil(c.tokens / tokens_per_iteration));
  e.training_s = static_cast<double>(e.iterations) * iteration_s;
  e.wall_time_s = e.training_s;
  if (c.checkpoints) {
    const config::Checkpoints& k = *c.checkpoints;
    const int weight_bytes = config::dtype_bytes(s.training.dtype);
    const double bytes_per_param =
        weight_bytes + workload::optimizer_bytes_per_param(s.training.optimizer, weight_bytes);
    e.checkpoint_bytes = static_cast<double>(parameter_count(s.model).total) * bytes_per_param;
    e.checkpoint_write_s = e.checkpoint_bytes / k.write_bandwidth_bytes_per_s;
    const config::HostLink& host = s.cluster.hardware.host_link;
    const double snapshot_s = host.latency_s + e.checkpoint_bytes / gpus / host.d2h_bandwidth_bytes_per_s;
    e.checkpoint_pause_s = k.async ? snapshot_s : std::max(e.checkpoint_write_s, snapshot_s);
    if (k.async) {
      const double per_node = static_cast<double>(std::max<int64_t>(1, s.cluster.topology.node.gpus));
      e.snapshot_host_bytes_per_node = e.checkpoint_bytes / gpus * std::min(per_node, gpus);
      const double capacity = s.cluster.topology.node.host_memory_bytes;
      if (capacity > 0 && training_host_bytes_per_node + e.snapshot_host_bytes_per_node > capacity) {
        e.notes.push_back(
            fmt::format("async checkpoints do not fit: a node's GPUs copy {} into pinned host memory beside "
                        "the {} training "
                        "holds there, over the node's {}",
                        config::format_bytes_rounded(e.snapshot_host_bytes_per_node),
                        config::format_bytes_rounded(training_host_bytes_per_node),
                        config::format_bytes_rounded(capacity)));
      }
    }
    double restart_s = 0;
    if (c.interruptions) {
      e.job_mtbi_s = c.interruptions->mtbi_per_gpu_s / gpus;
      restart_s = c.interruptions->restart_s + (k.async ? e.checkpoint_write_s : 0);
    }
    double interval_s =
        k.interval_s > 0 ? k.interval_s : optimal_checkpoint_interval_s(e.checkpoint_pause_s, e.job_mtbi_s);
    if (k.async && interval_s < e.checkpoint_write_s) {
      e.notes.push_back(
          fmt::format("checkpoint interval raised from {:.1f} s to the {:.1f} s a background write takes "
                      "(writes do not overlap)",
                      interval_s, e.checkpoint_write_s));
      interval_s = e.checkpoint_write_s;
    }
    // Whole iterations (async: not below the write), and at most the run: a run shorter than the
    // interval checkpoints once, at its end.
    double every = std::max(1.0, std::round(interval_s / iteration_s));
    if (k.async) every = std::max(every, std::ceil(e.checkpoint_write_s / iteration_s));
    e.checkpoint_every_iterations = static_cast<int64_t>(std::min(every, static_cast<double>(e.iterations)));
    e.checkpoint_interval_s = static_cast<double>(e.checkpoint_every_iterations) * iteration_s;
    e.wall_time_s = expected_wall_time_s(e.training_s, e.checkpoint_interval_s, e.checkpoint_pause_s,
                                         restart_s, e.job_mtbi_s);
    if (e.job_mtbi_s > 0) e.expected_interruptions = e.wall_time_s / e.job_mtbi_s;
    if (!std::isfinite(e.wall_time_s)) {
      e.notes.push_back(fmt::format(
          "the run would not finish: the job is interrupted every {} on average, too often for {} "
          "restarts and checkpoints every {:.0f} s",
          config::format_quantity(e.job_mtbi_s, config::QuantityKind::kDuration),
          config::format_quantity(restart_s, config::QuantityKind::kDuration), e.checkpoint_interval_s));
    }
  }
  e.goodput = std::isfinite(e.wall_time_s) ? e.training_s / e.wall_time_s : 0;
  if (const std::optional<double> price = s.cluster.hardware.cost.price_per_gpu_hour_usd;
      price && std::isfinite(e.wall_time_s)) {
    e.cost_usd = gpus * e.wall_time_s / 3600 * *price;
  }
  return e;
}

}  // namespace trainsim::analytic
