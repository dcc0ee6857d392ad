#include "tests/calibrate/nccl_tests_writer.h"

#include <cmath>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <fmt/printf.h>

#include "calibrate/collective_kinds.h"

namespace trainsim::calibrate::testing {
namespace {

using config::CollectiveKind;

// util.cu getFloatStr: 2, 1 or 0 decimals by magnitude, exponent form when too wide.
std::string float_str(double value, int width) {
  int power = 0;
  for (uint64_t v = 1; value >= static_cast<double>(v); v *= 10) power++;
  if (power < width - 2) return fmt::sprintf("%*.2f", width, value);
  if (power < width - 1) return fmt::sprintf("%*.1f", width, value);
  if (power < width + 1) return fmt::sprintf("%*.0f", width, value);
  return fmt::sprintf("%*.1e", width, value);
}

bool per_rank_count(CollectiveKind kind) {
  return kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter ||
         kind == CollectiveKind::kAllToAll;
}

std::string redop(CollectiveKind kind) {
  return kind == CollectiveKind::kAllGather || kind == CollectiveKind::kAllToAll ? "none" : "sum";
}

struct Row {
  double size = 0;
  double count = 0;
  double time_us = 0;
  double algbw = 0;
  double busbw = 0;
};

std::vector<Row> rows(const SyntheticRun& run) {
  const int ranks = run.nodes * run.gpus_per_node;
  std::vector<Row> out;
  for (double requested = run.min_bytes; requested <= run.max_bytes; requested *= 2) {
    Row r;
    r.size = printed_size(run, requested);
    const double count = std::floor(requested / 4);
    r.count = per_rank_count(run.kind) ? std::floor(count / ranks) : count;
    // nccl-tests times even an empty collective (launch only): a tenth of the smallest latency.
    r.time_us = 1e6 * (r.size > 0 ? model_time_s(run, r.size) : 0.1 * run.model.front().latency_s);
    r.algbw = r.size / 1e9 / (r.time_us * 1e-6);
    r.busbw = r.algbw * bus_bandwidth_factor(run.kind, ranks);
    out.push_back(r);
  }
  return out;
}

}  // namespace

double model_time_s(const SyntheticRun& run, double bytes) {
  const ModelRange* range = &run.model.front();
  for (const ModelRange& m : run.model) {
    if (bytes >= m.min_bytes) range = &m;
  }
  return range->latency_s + bytes * bus_bandwidth_factor(run.kind, run.nodes * run.gpus_per_node) /
                                range->bus_bandwidth_bytes_per_s;
}

double printed_size(const SyntheticRun& run, double requested_bytes) {
  const int ranks = run.nodes * run.gpus_per_node;
  const double count = std::floor(requested_bytes / 4);
  return 4 * (per_rank_count(run.kind) ? std::floor(count / ranks) * ranks : count);
}

std::string nccl_tests_text(const SyntheticRun& run) {
  const std::string program(nccl_tests_program(run.kind));
  std::string out;
  out +=
      fmt::format("# nccl-tests version 2.17.1 nccl-headers={0} nccl-library={0}\n", run.nccl_version_code);
  out += fmt::format("# Collective test starting: {}\n", program);
  out += fmt::sprintf(
      "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d iters: %d agg iters: "
      "%d "
      "validation: %d graph: %d unalign: %d\n",
      1, run.gpus_per_node, static_cast<long>(run.min_bytes), static_cast<long>(run.max_bytes), 2L, "factor",
      5, 20, 1, 1, 0, 0);
  out += "#\n# Using devices\n";
  for (int node = 0; node < run.nodes; ++node) {
    for (int gpu = 0; gpu < run.gpus_per_node; ++gpu) {
      out += fmt::sprintf("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n",
                          node * run.gpus_per_node + gpu, 0, 40000 + node, fmt::format("node{:02}", node + 1),
                          gpu, 0, 0x18 + 0x10 * gpu, 0, run.device_name);
    }
  }
  out += "#\n";
  out += fmt::sprintf(
      "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "",
      "", "", "");
  out += fmt::sprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size",
                      "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                      "busbw", "#wrong", 0, "");
  out += fmt::sprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)",
                      "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
                      "", 0, "");
  double busbw_sum = 0;
  const std::vector<Row> table = rows(run);
  for (const Row& r : table) {
    out += fmt::sprintf("%12li  %12li  %8s  %6s  %6s", static_cast<long>(r.size), static_cast<long>(r.count),
                        "float", redop(run.kind), fmt::sprintf("%6i", -1));
    for (const double scale : {1.0, 1.01}) {  // in-place a little slower
      const double time = r.time_us * scale;
      out += fmt::sprintf("  %7s  %6s  %6s  %6g", float_str(time, 7), float_str(r.algbw / scale, 6),
                          float_str(r.busbw / scale, 6), 0.0);
    }
    out += "\n";
    busbw_sum += r.busbw;
  }
  out += fmt::sprintf("# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
  out += fmt::sprintf("# %-20s : %g %s\n", "Avg bus bandwidth", busbw_sum / static_cast<double>(table.size()),
                      "");
  out += "#\n";
  out += fmt::format("# Collective test concluded: {}\n", program);
  return out;
}

std::string nccl_tests_json(const SyntheticRun& run) {
  const std::string program(nccl_tests_program(run.kind));
  std::string out = "{";
  out += fmt::format(
      "\"version\":2,\"start_time\":\"2026-11-29 10:00:00\",\"args\":[\"./build/{}\",\"-b\",\"{}\",\"-e\","
      "\"{}\",\"-f\",\"2\",\"-g\",\"{}\",\"-J\",\"{}.json\"],\"env\":[\"NCCL_DEBUG=WARN\"{}],"
      "\"nccl_version\":{},",
      program, static_cast<long>(run.min_bytes), static_cast<long>(run.max_bytes), run.gpus_per_node, program,
      run.nccl_algo.empty() ? "" : fmt::format(",\"NCCL_ALGO={}\"", run.nccl_algo), run.nccl_version_code);
  out += fmt::format(
      "\"config\":{{\"nthreads\":1,\"ngpus\":{},\"minimum_bytes\":{},\"maximum_bytes\":{},"
      "\"step_factor\":2,\"warmup_iters\":5,\"iterations\":20,\"aggregated_iterations\":1,"
      "\"validation\":1,\"graph\":0,\"blocking_collectives\":\"false\",\"per_iter_timing\":\"false\","
      "\"parallel_init\":\"false\",\"devices\":[",
      run.gpus_per_node, static_cast<long>(run.min_bytes), static_cast<long>(run.max_bytes));
  for (int node = 0; node < run.nodes; ++node) {
    out += fmt::format(
        "{}{{\"rank\":{},\"group\":0,\"pid\":{},\"hostname\":\"node{:02}\",\"device\":0,"
        "\"device_hex\":\"0000:18:00\",\"device_info\":\"{}\"}}",
        node == 0 ? "" : ",", node * run.gpus_per_node, 40000 + node, node + 1, run.device_name);
  }
  out += "]},\"results\":[";
  double busbw_sum = 0;
  const std::vector<Row> table = rows(run);
  for (size_t i = 0; i < table.size(); ++i) {
    const Row& r = table[i];
    const auto half = [&](double scale) {
      return fmt::sprintf("{\"time\":%lf,\"alg_bw\":%lf,\"bus_bw\":%lf,\"nwrong\":%lf}", r.time_us * scale,
                          r.algbw / scale, r.busbw / scale, 0.0);
    };
    out += fmt::format(
        "{}{{\"size\":{},\"count\":{},\"type\":\"float\",\"redop\":\"{}\",\"root\":\"    -1\","
        "\"out_of_place\":{},\"in_place\":{},\"actual_iterations\":20,\"experiment_name\":\"\"}}",
        i == 0 ? "" : ",", static_cast<long>(r.size), static_cast<long>(r.count), redop(run.kind), half(1.0),
        half(1.01));
    busbw_sum += r.busbw;
  }
  out += fmt::sprintf(
      "],\"out_of_bounds\":{\"count\":0,\"okay\":\"true\"},\"average_bus_bandwidth\":{\"bandwidth\":%lf,"
      "\"okay\":\"unchecked\"},\"errors\":[],\"end_time\":\"2026-11-29 10:01:00\"}\n",
      busbw_sum / static_cast<double>(table.size()));
  return out;
}

std::vector<Fixture> fixtures() {
  constexpr double kKiB = 1024;
  constexpr double kMiB = 1024 * kKiB;
  // An 8-GPU NVLink node, shaped like NCCL's protocols: LL below 64 KiB, LL128 to 4 MiB, Simple above.
  // Synthetic numbers, chosen to be plausible, not measured.
  const auto node = [&](CollectiveKind kind, double ll_gbps, double ll128_gbps, double simple_gbps) {
    SyntheticRun run;
    run.kind = kind;
    run.model = {{8, 64 * kKiB, 12e-6, ll_gbps * 1e9},
                 {64 * kKiB, 4 * kMiB, 20e-6, ll128_gbps * 1e9},
                 {4 * kMiB, 1 << 30, 45e-6, simple_gbps * 1e9}};
    return run;
  };
  std::vector<Fixture> out = {
      {"all_reduce_perf.8xh100.log", node(CollectiveKind::kAllReduce, 40, 250, 460), false},
      {"all_gather_perf.8xh100.log", node(CollectiveKind::kAllGather, 30, 220, 370), false},
      {"reduce_scatter_perf.8xh100.log", node(CollectiveKind::kReduceScatter, 30, 220, 360), false},
      {"alltoall_perf.8xh100.log", node(CollectiveKind::kAllToAll, 20, 150, 330), false},
      {"sendrecv_perf.8xh100.log", node(CollectiveKind::kSendRecv, 15, 120, 300), false},
  };
  SyntheticRun two_nodes;  // 16 GPUs on 2 nodes over 8 x 400 Gb/s NICs per node
  two_nodes.kind = CollectiveKind::kAllReduce;
  two_nodes.nodes = 2;
  two_nodes.model = {{8, 256 * kKiB, 30e-6, 8e9}, {256 * kKiB, 1 << 30, 60e-6, 180e9}};
  out.push_back({"all_reduce_perf.16xh100.json", two_nodes, true});
  return out;
}

}  // namespace trainsim::calibrate::testing
