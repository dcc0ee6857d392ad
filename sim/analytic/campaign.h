// The whole training run in closed form: from the simulated iteration time to the time to train on
// the campaign's tokens once checkpoints and interruptions are paid for, its goodput and its cost.
//
// Interruptions arrive as a Poisson process (each stops every rank; training resumes from the last
// complete checkpoint after the restart time). The expected wall-clock time and the optimum
// checkpoint interval are Daly's (Future Generation Computer Systems 22(3), 2006), which his
// simulations confirm across mean times between interruptions from 15 minutes to a day.
#ifndef TRAINSIM_SIM_ANALYTIC_CAMPAIGN_H_
#define TRAINSIM_SIM_ANALYTIC_CAMPAIGN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/scenario.h"

namespace trainsim::analytic {

// Daly's higher-order optimum of the compute time between checkpoints, for a checkpoint that stops
// training for `checkpoint_s` and a mean time between interruptions `mtbi_s` (both > 0):
//   sqrt(2δM) [1 + sqrt(δ/2M)/3 + (δ/2M)/9] - δ   when δ < 2M, else M.
double optimal_checkpoint_interval_s(double checkpoint_s, double mtbi_s);

// Daly's expected wall-clock time to complete `work_s` of training that checkpoints after every
// `interval_s` of it (each checkpoint stopping training for `checkpoint_s`) when interruptions
// arrive every `mtbi_s` on average and each costs `restart_s` before training resumes:
//   M exp(R/M) (exp((τ+δ)/M) - 1) T/τ,
// T (1 + δ/τ) without interruptions (mtbi_s = 0). Infinite when the job would in effect never finish.
double expected_wall_time_s(double work_s, double interval_s, double checkpoint_s, double restart_s,
                            double mtbi_s);

// The campaign of a scenario.
struct CampaignEstimate {
  double tokens = 0;
  int64_t iterations = 0;       // ceil(tokens / (global batch x sequence length))
  double training_s = 0;        // iterations x iteration time: no checkpoints, no interruptions
  double checkpoint_bytes = 0;  // one checkpoint: weights and optimizer state, one copy (0: none)
  // Training stops this long per checkpoint: the storage write, or with async checkpoints each GPU's
  // copy of its share (checkpoint_bytes / GPUs) to pinned host memory.
  double checkpoint_pause_s = 0;
  double checkpoint_write_s = 0;            // checkpoint_bytes / the storage's write bandwidth
  double snapshot_host_bytes_per_node = 0;  // async: the pinned host memory a node's GPUs copy into
  int64_t checkpoint_every_iterations = 0;  // 0: no checkpoints; at most `iterations`
  double checkpoint_interval_s = 0;         // training time between checkpoints
  double job_mtbi_s = 0;                    // the job's mean time between interruptions (0: none)
  double expected_interruptions = 0;
  double wall_time_s = 0;          // expected; infinite when the job would not finish
  double goodput = 1;              // training_s / wall_time_s
  std::optional<double> cost_usd;  // GPUs x wall time x the price per GPU-hour (hardware.cost)
  std::vector<std::string> notes;  // adjustments made (an interval raised to the write time, ...)
};

// The campaign of `scenario` (which has one: campaign.tokens > 0) at `iteration_s` per iteration.
// With async checkpoints an interruption also loses, on average, the work of one background write
// (the checkpoint being written is not yet usable), which is added to the restart time; the
// interval is raised to the write time where it is shorter, since writes do not overlap; and a note
// says so when the snapshot does not fit in a node's host memory beside the
// `training_host_bytes_per_node` that training itself holds there.
CampaignEstimate estimate_campaign(const config::Scenario& scenario, double iteration_s,
                                   double training_host_bytes_per_node = 0);

}  // namespace trainsim::analytic

#endif  // TRAINSIM_SIM_ANALYTIC_CAMPAIGN_H_
