// The run report as a table (run_report.h).
#include <algorithm>

#include <fmt/format.h>

#include "sim/common/text_table.h"
#include "sim/config/units.h"
#include "sim/report/campaign.h"
#include "sim/report/inputs.h"
#include "sim/report/link_report.h"
#include "sim/report/power.h"
#include "sim/report/run_report.h"
#include "sim/report/why_slow.h"
#include "sim/workload/plan.h"

namespace trainsim::report {
namespace {

// The stragglers section of the table: the GPUs' speeds and the slow NICs.
std::string render_stragglers(const StragglerSummary& st, int64_t gpus) {
  std::string out = "\n# stragglers\n";
  if (st.gpus) {
    out += fmt::format("{:<26} {:>13.1f}%   of the profile's kernel rates (rank {}, pipeline stage {})\n",
                       "slowest GPU", 100 * st.gpus->slowest_speed, st.gpus->slowest_rank,
                       st.gpus->slowest_stage);
    out += fmt::format("{:<26} {:>13.1f}%   ({} of {} GPUs below 100 %)\n", "mean GPU speed",
                       100 * st.gpus->mean_speed, st.gpus->below_profile, gpus);
  }
  for (const auto& [node, bandwidth] : st.slow_nic_bytes_per_s) {
    out += fmt::format("{:<26} {:>11.1f} Gb/s per NIC (node {})\n", "slow NICs", 8 * bandwidth / 1e9, node);
  }
  return out;
}

// "# plan: tp 8 x pp 8 (vpp 3, interleaved) x dp 1, megatron sequence parallelism, ZeRO 0, selective
// recomputation; micro-batch 1, 64 micro-batches per replica, global batch 64 of 2048 tokens: 131072
// tokens per iteration"
std::string render_plan(const PlanSummary& p) {
  std::string degrees = fmt::format("tp {}", p.tp);
  if (p.sp > 1) degrees += fmt::format(" x sp {}", p.sp);
  degrees += fmt::format(" x pp {}", p.pp);
  if (p.pp > 1) {
    degrees += fmt::format(" ({}{})", p.vpp > 1 ? fmt::format("vpp {}, ", p.vpp) : "", p.schedule);
  }
  degrees += fmt::format(" x dp {}", p.dp);
  if (p.ep > 1) degrees += fmt::format(", ep {}", p.ep);
  std::string scheme = p.sequence_parallel == "none" ? "no sequence parallelism"
                                                     : p.sequence_parallel + " sequence parallelism";
  if (p.cp_comm) scheme = fmt::format("ring context parallelism ({})", *p.cp_comm);
  return fmt::format(
      "# plan: {}, {}, ZeRO {}, {} recomputation; micro-batch {}, {} micro-batch{} per replica, global batch "
      "{} of {} tokens: {} tokens per iteration\n",
      degrees, scheme, p.zero_stage, p.recompute == "none" ? "no" : p.recompute, p.micro_batch,
      p.micro_batches_per_replica, p.micro_batches_per_replica == 1 ? "" : "es", p.global_batch, p.seq_len,
      p.tokens_per_iteration);
}

// "3   (0.1731, 0.1729, 0.1729 s; ...)": each iteration's time, with their spread or why there is none.
std::string render_iterations(const std::vector<double>& times) {
  if (times.size() < 2) return "";
  std::string listed;
  for (const double t : times) listed += fmt::format("{}{:.6f}", listed.empty() ? "" : ", ", t);
  const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
  const auto [steady_lo, steady_hi] = std::minmax_element(times.begin() + 1, times.end());
  std::string why;
  if (*hi - *lo <= 1e-9 * *hi) {
    why = "all equal: the simulation draws no noise and stragglers are fixed per rank";
  } else if (*steady_hi - *steady_lo <= 1e-9 * *steady_hi) {
    why = fmt::format(
        "the first {:+.2f}% from the others, which nothing of a previous iteration overlaps differently; "
        "then equal: the simulation draws no noise and stragglers are fixed per rank",
        100 * (times.front() - *steady_lo) / *steady_lo);
  } else {
    why = fmt::format("spread {:.2f}% from the fastest to the slowest", 100 * (*hi - *lo) / *lo);
  }
  return fmt::format("{:<26} {:>14}   ({} s; the report is the last; {})\n", "iterations", times.size(),
                     listed, why);
}

std::string render_breakdown(const RunReport& report) {
  const RunMetrics& metrics = report.metrics;
  const double t = metrics.iteration_time_s;
  std::string out = fmt::format("\n# breakdown of rank {} (critical)\n", report.critical_rank);
  for (const BreakdownPart& part : kBreakdownParts) {
    const std::string_view key = part.key;
    const double v = metrics.breakdown.*part.seconds;
    out += fmt::format("{:<26} {:>14.6f} s {:>6.1f}%\n", key.substr(0, key.size() - 2), v,
                       t > 0 ? 100 * v / t : 0);
    if (part.seconds == &Breakdown::compute_s) {
      const double outside = metrics.breakdown.outside_layers_s;
      out += fmt::format("{:<26} {:>14.6f} s {:>6.1f}%   (embedding, LM head and loss, optimizer step)\n",
                         "  of which outside layers", outside, t > 0 ? 100 * outside / t : 0);
    }
  }
  if (report.stages.empty()) return out;
  out += fmt::format("\n# breakdown per pipeline stage (s, up to each stage's last op)\n");
  TextTable stages({{"stage", TextTable::Align::kRight, 6},
                    {"layers", TextTable::Align::kRight, 7},
                    {"rank", TextTable::Align::kRight, 7}});
  for (const char* column : {"busy until", "compute", "comm", "bubble", "offload", "idle"}) {
    stages.add_column({column, TextTable::Align::kRight, 11});
  }
  for (const StageBreakdown& st : report.stages) {
    std::vector<std::string> row = {std::to_string(st.stage), std::to_string(st.layers),
                                    std::to_string(st.rank), fmt::format("{:.4f}", st.busy_until_s)};
    for (const BreakdownPart& part : kBreakdownParts) {
      row.push_back(fmt::format("{:.4f}", st.breakdown.*part.seconds));
    }
    stages.add_row(std::move(row));
  }
  return out + stages.render();
}

std::string render_memory(const RunReport& report) {
  const MemoryVerdict& m = report.metrics.memory;
  std::string out = fmt::format(
      "\n# memory\n{:<26} {:>11.2f} GiB of {:.2f} GiB (rank {}); {:.2f} GiB usable after the "
      "{:g}% headroom (training.memory_headroom)\n",
      "peak HBM", m.peak_hbm_bytes / config::kBytesPerGiB, m.hbm_capacity_bytes / config::kBytesPerGiB,
      m.peak_hbm_rank.value_or(0), m.usable_hbm_bytes / config::kBytesPerGiB, 100 * m.memory_headroom);
  for (const auto& [name, bytes] : m.hbm_at_peak_bytes) {
    out += fmt::format(
        "  {:<24} {:>11.2f} GiB{}\n", name, bytes / config::kBytesPerGiB,
        name == "gradients" ? fmt::format("   ({}, training.grad_dtype)", report.gradient_dtype) : "");
  }
  out += fmt::format("{:<26} {:>11.2f} GiB of {:.2f} GiB\n", "peak host memory per node",
                     m.peak_host_bytes_per_node / config::kBytesPerGiB,
                     m.host_capacity_bytes_per_node / config::kBytesPerGiB);
  const bool in_headroom = m.peak_hbm_bytes > m.usable_hbm_bytes && m.peak_hbm_bytes <= m.hbm_capacity_bytes;
  out += fmt::format(
      "{:<26} {:>14}{}\n", "fits", m.fits ? "yes" : "NO",
      in_headroom ? "   (the peak is in the headroom: a real run would likely run out of memory)" : "");
  return out;
}

// The communication log in nccl-tests form (size, count, time, algbw, busbw per kind and group).
std::string render_comm_table(const RunReport& report) {
  std::string out =
      fmt::format("# communication of rank {} (nccl-tests form; time from launch)\n", report.critical_rank);
  out += fmt::format("# {:>14} {:>10} {:>8} {:>6} {:>7} {:>12} {:>10} {:>10}\n", "kind", "group", "ranks",
                     "calls", "bytes", "time", "algbw", "busbw");
  out += fmt::format("# {:>14} {:>10} {:>8} {:>6} {:>7} {:>12} {:>10} {:>10}\n", "", "", "", "", "(B)",
                     "(us)", "(GB/s)", "(GB/s)");
  std::vector<std::string> groups;
  for (const CommRecord& c : report.comm) {
    out += fmt::format("  {:>14} {:>10} {:>8} {:>6} {:>7.0f} {:>12.2f} {:>10.2f} {:>10.2f}\n", c.kind,
                       c.group, c.group_size, c.calls, c.bytes_per_call, 1e6 * c.mean_time_s,
                       c.algbw_bytes_per_s / 1e9, c.busbw_bytes_per_s / 1e9);
    if (std::find(groups.begin(), groups.end(), c.group) == groups.end()) groups.push_back(c.group);
  }
  for (const std::string& group : groups) {
    const std::string_view meaning = workload::describe_group(group);
    if (!meaning.empty()) out += fmt::format("# {}: {}\n", group, meaning);
  }
  return out;
}

}  // namespace

std::string render_table(const RunReport& report) {
  const RunMetrics& metrics = report.metrics;
  const double t = metrics.iteration_time_s;
  const int64_t gpus = metrics.gpus;
  std::string out = fmt::format("# trainsim {} ({} GPU{})\n", report.scenario, gpus, gpus == 1 ? "" : "s");
  out += render_inputs(report.provenance.at("inputs"));
  out += render_plan(report.plan);
  out += report.attention_kernel == "fused"
             ? fmt::format("# attention kernel: fused (flash-style, priced by {}; model.attention)\n",
                           report.attention_pricing)
             : "# attention kernel: unfused (softmax(QK^T)V as batched GEMMs and memory passes that store "
               "the scores; model.attention)\n";
  out += fmt::format("{:<26} {:>14.6f} s\n", "iteration time", t);
  if (report.iteration_times_s) out += render_iterations(*report.iteration_times_s);
  out += fmt::format("{:<26} {:>14.1f}\n", "tokens/s", metrics.tokens_per_s);
  out += fmt::format("{:<26} {:>14.1f}\n", "TFLOP/s per GPU", metrics.tflops_per_gpu);
  out += fmt::format("{:<26} {:>13.1f}%   (model FLOPs{}, attention counted dense)\n", "MFU",
                     100 * metrics.mfu, report.dtype == "fp8" ? " of the fp8 peak" : "");
  out += fmt::format("{:<26} {:>13.1f}%   (+ recomputation)\n", "HFU", 100 * metrics.hfu);
  out += fmt::format("{:<26} {:>13.1f}%   (FLOPs the kernels run: causal tiles skipped)\n",
                     "executed FLOPs of peak", 100 * metrics.executed_flops_utilization);
  out += render_what_if(report.provenance.at("inputs"));
  if (report.accuracy) out += render_accuracy(*report.accuracy);
  out += render_breakdown(report);
  out += render_why_slow(report.why, t);
  out += render_memory(report);
  if (report.stragglers) out += render_stragglers(*report.stragglers, gpus);
  if (report.power) out += render_power(*report.power);
  if (report.campaign) out += render_campaign(*report.campaign);
  out += "\n" + render_comm_table(report);
  if (report.links) out += "\n" + render_links(*report.links);
  if (!report.warnings.empty()) {
    out += "\n# warnings\n";
    for (const std::string& w : report.warnings) out += "- " + w + "\n";
  }
  return out;
}

}  // namespace trainsim::report
