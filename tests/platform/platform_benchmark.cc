// How long building the platform takes and how fast a large collective simulates, on the
// rail-optimized H100 topology cut to 512 nodes (4,096 GPUs) and at full size (2,048 nodes,
// 16,384 GPUs). SimGrid allows one engine per process, so every measurement runs in a child
// process and reports back through a pipe. Built with -DTRAINSIM_BUILD_BENCHMARKS=ON:
//   build/tests/platform/platform_benchmark --benchmark_counters_tabular=true
#include <array>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <sys/wait.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include "sim/config/loader.h"
#include "sim/cost/flow_runner.h"
#include "sim/platform/simgrid_platform.h"

namespace trainsim {
namespace {

using Figures = std::array<double, 4>;

// Runs `body` in a child process and returns what it computed.
Figures in_child(const std::function<Figures()>& body) {
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const Figures figures = body();
    const bool written =
        write(fds[1], figures.data(), sizeof(Figures)) == static_cast<ssize_t>(sizeof(Figures));
    _exit(written ? 0 : 1);
  }
  close(fds[1]);
  Figures figures{};
  const bool read_all =
      read(fds[0], figures.data(), sizeof(Figures)) == static_cast<ssize_t>(sizeof(Figures));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!read_all || !WIFEXITED(status) || WEXITSTATUS(status) != 0) std::abort();
  return figures;
}

config::Topology rail_topology(int64_t nodes) {
  return config::load_topology(std::string(TRAINSIM_SOURCE_DIR) + "/topologies/h100-rail-16k.yaml",
                               {config::parse_override("fabric.nodes=" + std::to_string(nodes))});
}

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Graph construction plus the SimGrid platform (hosts, links, routing zone).
void BM_PlatformBuild(benchmark::State& state) {
  const config::Topology topology = rail_topology(state.range(0));
  Figures last{};
  for (auto _ : state) {
    last = in_child([&] {
      const auto start = std::chrono::steady_clock::now();
      const platform::TopologyGraph graph(topology);
      const double graph_s = since(start);
      const std::unique_ptr<simgrid::s4u::Engine> engine = platform::create_engine();
      const platform::Platform platform(*engine, graph);
      return Figures{graph_s, since(start) - graph_s, 0, 0};
    });
    state.SetIterationTime(last[0] + last[1]);
  }
  state.counters["gpus"] = static_cast<double>(topology.total_gpus());
  state.counters["graph_s"] = last[0];
  state.counters["simgrid_s"] = last[1];
}
BENCHMARK(BM_PlatformBuild)
    ->Arg(512)
    ->Arg(2048)
    ->UseManualTime()
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

// A 1 GiB all-reduce over every GPU with the given algorithm (0: ring, 1: tree): wall time of the
// simulation alone (one actor per GPU), with the flows simulated per second.
void BM_AllReduce(benchmark::State& state) {
  const config::Topology topology = rail_topology(state.range(0));
  const cost::Algorithm algorithm = state.range(1) == 0 ? cost::Algorithm::kRing : cost::Algorithm::kTree;
  Figures last{};
  for (auto _ : state) {
    last = in_child([&] {
      const platform::TopologyGraph graph(topology);
      const cost::CollectiveModel model{cost::view_of(graph), {}};
      std::vector<int> members(static_cast<size_t>(graph.gpu_count()));
      for (int g = 0; g < graph.gpu_count(); ++g) members[static_cast<size_t>(g)] = g;
      auto start = std::chrono::steady_clock::now();
      const cost::CollectiveSchedule schedule = cost::plan_collective(
          cost::CollectiveKind::kAllReduce, members, 1024.0 * 1024 * 1024, model, algorithm);
      const double plan_s = since(start);
      double flows = 0;
      for (const cost::Phase& p : schedule.phases) flows += static_cast<double>(p.flows.size());
      const std::unique_ptr<simgrid::s4u::Engine> engine = platform::create_engine();
      const platform::Platform platform(*engine, graph);
      start = std::chrono::steady_clock::now();
      const double simulated_s = cost::run_sequentially(*engine, platform, {schedule}).at(0);
      return Figures{since(start), plan_s, flows, simulated_s};
    });
    state.SetIterationTime(last[0]);
  }
  state.counters["gpus"] = static_cast<double>(topology.total_gpus());
  state.counters["plan_s"] = last[1];
  state.counters["flows"] = last[2];
  state.counters["flows_per_s"] = last[2] / last[0];
  state.counters["simulated_ms"] = last[3] * 1e3;
}
BENCHMARK(BM_AllReduce)
    ->Args({512, 0})
    ->Args({2048, 0})
    ->Args({2048, 1})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainsim

BENCHMARK_MAIN();
