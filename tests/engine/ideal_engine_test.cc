// The ideal network's event loop (sim/engine/ideal_engine.h) against the SimGrid engine on the same
// ideal network (IdealTransport): on shipped scenarios and on plans that exercise each scheduling
// rule, every op of every simulated rank runs at the same times and the memory peaks, iteration ends
// and op counts are the same.
#include "sim/engine/ideal_engine.h"

#include <cmath>
#include <functional>
#include <memory>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/common/isolated.h"
#include "sim/config/loader.h"
#include "sim/cost/compute_model.h"
#include "sim/engine/rank_progress.h"
#include "sim/workload/builder.h"
#include "sim/workload/gpu_speed.h"
#include "sim/workload/simulated_ranks.h"
#include "tests/config/config_test_util.h"
#include "tests/engine/ideal_transport.h"

namespace trainsim::engine {
namespace {

// Which ranks a run simulates, and the graphs they run.
enum class Ranks {
  kCollapsed,       // one per class (workload::simulated_ranks)
  kEvery,           // every rank, running its class's graph renamed (as `trainsim run --full`)
  kEveryOwnGraphs,  // every rank, each running the graph built for it
};

// A scenario's simulated ranks ready for either engine, as `trainsim run` prepares them. It keeps its
// own copy of the scenario, whose hardware profile the compute model refers to.
struct Prepared {
  config::Scenario scenario;
  workload::ParallelPlan plan;
  std::vector<int64_t> ranks;
  std::vector<workload::Graph> graphs;
  std::vector<const workload::Graph*> pointers;
  WarningLog warnings;
  std::unique_ptr<cost::ComputeModel> compute;
  std::vector<double> speeds;
  cost::IdealTiers tiers;

  Prepared(const config::Scenario& s, Ranks which) : scenario(s), plan(workload::make_plan(scenario)) {
    const bool full = which != Ranks::kCollapsed;
    if (full) {
      for (int64_t r = 0; r < plan.world_size(); ++r) ranks.push_back(r);
    } else {
      ranks = workload::simulated_ranks(scenario, plan);
    }
    if (which == Ranks::kEvery) {
      graphs = workload::build_class_graphs(scenario, plan);
      for (const int64_t r : ranks) pointers.push_back(&graphs[static_cast<size_t>(plan.class_of(r))]);
    } else {
      graphs = workload::build_rank_graphs(scenario, plan, ranks);
      for (const workload::Graph& g : graphs) pointers.push_back(&g);
    }
    compute = std::make_unique<cost::ComputeModel>(scenario.cluster.hardware, &warnings);
    speeds = workload::simulated_speeds(workload::gpu_speeds(scenario, plan), plan, ranks, full);
    tiers = cost::ideal_tiers(scenario);
  }
};

// The figures compared, flattened so that a child process can send them back: per job its times and
// op count, per rank its finish, memory peaks and every op's start, launch and end; or, for a
// simulation a budget stopped, where it stopped.
using Figures = std::vector<double>;
Figures flatten(const std::function<std::vector<EngineResult>()>& simulate_jobs) {
  Figures out;
  try {
    for (const EngineResult& r : simulate_jobs()) {
      out.insert(out.end(), {r.iteration_time_s, r.total_time_s, static_cast<double>(r.critical_rank),
                             static_cast<double>(r.ops_executed)});
      out.insert(out.end(), r.iteration_end_s.begin(), r.iteration_end_s.end());
      for (const RankRun& run : r.ranks) {
        out.insert(out.end(), {run.finish_s, run.peak_hbm_bytes, run.peak_host_bytes});
        out.insert(out.end(), run.hbm_at_peak_bytes.begin(), run.hbm_at_peak_bytes.end());
        for (const std::vector<double>* times : {&run.start_s, &run.launch_s, &run.end_s}) {
          out.insert(out.end(), times->begin(), times->end());
        }
      }
    }
  } catch (const BudgetExceededError& e) {
    out = {-1, static_cast<double>(e.ops_executed()), e.simulated_s(), static_cast<double>(e.ops_total())};
  }
  return out;
}

// What `simulate_jobs` returned (flattened) or the message of what it threw, run with the SimGrid
// engine in a child: SimGrid allows one simulation per process.
IsolatedResult in_child(const std::function<std::vector<EngineResult>()>& simulate_jobs) {
  IsolatedResult result;
  run_isolated(
      1, {}, [&](size_t) { return nlohmann::json(flatten(simulate_jobs)); },
      [&](size_t, IsolatedResult done) { result = std::move(done); });
  return result;
}

// flatten(simulate_jobs) with the SimGrid engine.
Figures simgrid_figures(const std::function<std::vector<EngineResult>()>& simulate_jobs) {
  const IsolatedResult result = in_child(simulate_jobs);
  EXPECT_TRUE(result.ok) << result.error;
  return result.ok ? result.value.get<Figures>() : Figures{-2};
}

// Expects the event loop's figures to be SimGrid's (relative 1e-9); `what` describes a figure by its
// index.
void expect_same(const Figures& loop, const Figures& simgrid,
                 const std::function<std::string(size_t)>& what) {
  ASSERT_EQ(loop.size(), simgrid.size())
      << "event loop: " << loop.front() << ", SimGrid: " << simgrid.front();
  size_t differing = 0;
  size_t earliest = 0;  // of the differing figures, the one SimGrid puts first in time
  for (size_t i = 0; i < loop.size(); ++i) {
    if (std::abs(loop[i] - simgrid[i]) > 1e-9 * std::max(std::abs(simgrid[i]), 1e-3)) {
      if (differing++ == 0 || simgrid[i] < simgrid[earliest]) earliest = i;
    }
  }
  EXPECT_EQ(differing, 0u) << differing << " of " << loop.size() << " figures differ; the earliest, "
                           << what(earliest) << ": event loop " << loop[earliest] << ", SimGrid "
                           << simgrid[earliest];
}

// What figure `index` of a one-job flatten is, for `p`'s graphs.
std::string describe_figure(const Prepared& p, size_t iterations, size_t index) {
  size_t at = 4 + iterations;
  if (index < at) return "a job-wide figure";
  for (size_t k = 0; k < p.pointers.size(); ++k) {
    const workload::Graph& g = *p.pointers[k];
    const size_t summary = 3 + workload::kMemoryCategoryCount;
    if (index >= at + summary + 3 * g.size()) {
      at += summary + 3 * g.size();
      continue;
    }
    const size_t i = index - at;
    if (i < summary) return fmt::format("rank {} summary figure {}", p.ranks[k], i);
    const auto op = static_cast<workload::OpId>((i - summary) % g.size());
    const workload::Op& o = g.op(op);
    return fmt::format("rank {} op {} ({} {} on {}, layer {}, micro-batch {}) {}", p.ranks[k], op,
                       workload::to_string(o.kind), workload::to_string(o.label),
                       workload::to_string(o.stream), o.layer, o.micro_batch,
                       std::array{"start", "launch", "end"}[(i - summary) / g.size()]);
  }
  return "past the end";
}

// Expects the iteration ends of one job (figures 4..) within `tolerance` and the op counts equal.
void expect_iterations_within(const Figures& loop, const Figures& simgrid, int iterations, double tolerance) {
  ASSERT_GE(loop.size(), 4u + static_cast<size_t>(iterations));
  ASSERT_GE(simgrid.size(), 4u + static_cast<size_t>(iterations));
  EXPECT_EQ(loop[3], simgrid[3]) << "ops executed";
  for (size_t i = 0; i < 4 + static_cast<size_t>(iterations); ++i) {
    if (i == 2 || i == 3) continue;  // the critical rank, the op count
    EXPECT_NEAR(loop[i], simgrid[i], tolerance * simgrid[i])
        << "figure " << i << ", SimGrid " << simgrid[i] << ", relative "
        << (loop[i] - simgrid[i]) / simgrid[i];
  }
}

// Runs `s` on both engines and expects the same figures, or with `iteration_within` > 0 the same
// iteration times within that relative tolerance.
void expect_same_as_simgrid(const config::Scenario& s, bool full = false, int iterations = 1,
                            uint64_t max_events = 0, double iteration_within = 0) {
  SCOPED_TRACE(s.name);
  const Prepared p(s, full ? Ranks::kEvery : Ranks::kCollapsed);
  EngineOptions options{full, iterations, max_events, 0, p.speeds};
  const Figures loop = flatten(
      [&] { return std::vector{simulate(p.plan, p.ranks, p.pointers, p.tiers, *p.compute, options)}; });
  const Figures simgrid = simgrid_figures([&] {
    IdealTransport transport(p.tiers);
    return std::vector{simulate(p.plan, p.ranks, p.pointers, transport, *p.compute, options)};
  });
  if (iteration_within > 0) {
    expect_iterations_within(loop, simgrid, iterations, iteration_within);
    return;
  }
  expect_same(loop, simgrid,
              [&](size_t i) { return describe_figure(p, static_cast<size_t>(iterations), i); });
}

config::Scenario shipped(const std::string& name) {
  return config::load_scenario(trainsim::testing::source_dir() / "scenarios" / name);
}

class ShippedScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedScenario, RunsAsOnSimGrid) { expect_same_as_simgrid(shipped(GetParam())); }

INSTANTIATE_TEST_SUITE_P(IdealEngine, ShippedScenario,
                         ::testing::Values("00-gpt3-125m-1gpu.yaml", "01-gpt3-1.3b-dp8.yaml",
                                           "02-megatron-22b-tp8.yaml", "03-gpt3-175b-64xa100.yaml",
                                           "04-llama3-8b-ulysses-8xh100.yaml",
                                           "05-llama3-8b-fpdt-2m-4xa100.yaml", "06-llama3-70b-256xh100.yaml",
                                           "07-gpt3-175b-1024xa100.yaml", "08-llama3-405b-16k-h100.yaml",
                                           "10-mixtral-8x7b-64xh100.yaml", "11-deepseek-v2-lite-16xh100.yaml",
                                           "12-llama3-405b-fsdp-pp-512xh100.yaml"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return "s" + param.param.substr(0, 2);
                         });

// Iterations after the first (ops wait for the previous iteration's, the host restarts), pipelines
// whose stages hand activations over, MoE all-to-alls and DualPipeV's two lanes.
TEST(IdealEngine, SeveralIterationsRunAsOnSimGrid) {
  expect_same_as_simgrid(shipped("06-llama3-70b-256xh100.yaml"), false, 3);
  expect_same_as_simgrid(shipped("11-deepseek-v2-lite-16xh100.yaml"), false, 2);
}

// Two lanes of kernels (DualPipeV, Megatron-Core's combined 1F1B): where both lanes ask for the GPU
// at one instant, the loop gives it in the order they asked and SimGrid in the order its actors
// happen to run, so the ops part; the iterations agree within 0.1 % (measured: 0.02 %).
TEST(IdealEngine, TwoLanesRunAsOnSimGrid) {
  config::Scenario dualpipe = shipped("11-deepseek-v2-lite-16xh100.yaml");
  dualpipe.parallelism.tp = 2;
  dualpipe.parallelism.pp = 2;
  dualpipe.parallelism.dp = 4;
  dualpipe.parallelism.ep = 4;
  dualpipe.parallelism.schedule = config::Schedule::kDualPipeV;
  dualpipe.parallelism.vpp = 2;
  dualpipe.parallelism.sequence_parallel = config::SequenceParallel::kMegatron;
  dualpipe.parallelism.uneven_stages = true;
  config::Scenario combined = shipped("11-deepseek-v2-lite-16xh100.yaml");
  combined.parallelism.ep_comm_overlap = true;
  expect_same_as_simgrid(combined, false, 1, 0, 1e-3);
  expect_same_as_simgrid(dualpipe, false, 1, 0, 1e-3);
}

// Every rank simulated: sends meet their receives instead of their mirrors.
TEST(IdealEngine, FullRunsRunAsOnSimGrid) {
  expect_same_as_simgrid(shipped("01-gpt3-1.3b-dp8.yaml"), true);
  expect_same_as_simgrid(shipped("04-llama3-8b-ulysses-8xh100.yaml"), true, 2);
  config::Scenario pipelined = shipped("03-gpt3-175b-64xa100.yaml");
  pipelined.parallelism.tp = 2;  // tp 2 x pp 4: 8 ranks
  pipelined.parallelism.pp = 4;
  pipelined.cluster.gpus = 8;
  expect_same_as_simgrid(pipelined, true);
}

// Every rank running its class's graph renamed (workload/renaming.h) gives, on both engines, every
// figure of every rank running the graph built for it: pipeline sends, tensor-, data- and
// sequence-parallel collectives, expert all-to-alls, a straggler, two iterations.
TEST(IdealEngine, RanksRunningTheirClassGraphRunAsOnTheirOwn) {
  config::Scenario pipelined = shipped("03-gpt3-175b-64xa100.yaml");
  pipelined.parallelism.tp = 2;  // tp 2 x pp 2 x dp 2: 8 ranks
  pipelined.parallelism.pp = 2;
  pipelined.parallelism.dp = 2;
  pipelined.cluster.gpus = 8;
  pipelined.stragglers.slow_gpus = {{.ranks = {5}, .nodes = {}, .speed = 0.7}};
  config::Scenario experts = shipped("11-deepseek-v2-lite-16xh100.yaml");
  for (const config::Scenario& s : {pipelined, shipped("04-llama3-8b-ulysses-8xh100.yaml"), experts}) {
    SCOPED_TRACE(s.name);
    const Prepared shared(s, Ranks::kEvery);
    const Prepared own(s, Ranks::kEveryOwnGraphs);
    ASSERT_LT(shared.graphs.size(), own.graphs.size());
    const auto options = [](const Prepared& p) { return EngineOptions{true, 2, 0, 0, p.speeds}; };
    const auto loop = [&](const Prepared& p) {
      return flatten([&] {
        return std::vector{simulate(p.plan, p.ranks, p.pointers, p.tiers, *p.compute, options(p))};
      });
    };
    const auto simgrid = [&](const Prepared& p) {
      return simgrid_figures([&] {
        IdealTransport transport(p.tiers);
        return std::vector{simulate(p.plan, p.ranks, p.pointers, transport, *p.compute, options(p))};
      });
    };
    const auto what = [&](size_t i) { return describe_figure(own, 2, i); };
    expect_same(loop(shared), loop(own), what);
    expect_same(simgrid(shared), simgrid(own), what);
  }
}

// The progress report: due at every clock reading when every_s is 0, so once per kClockCheckOps ops
// before the last, with ops, simulated time and wall time that only grow, on both engines.
TEST(IdealEngine, ProgressIsReportedWhileTheSimulationRuns) {
  const Prepared p(shipped("03-gpt3-175b-64xa100.yaml"), Ranks::kCollapsed);
  // The first thing wrong with the reports of a simulation run by `simulate_with`, or "".
  const auto check = [&](const auto& simulate_with) -> std::string {
    std::vector<SimulationProgress> seen;
    EngineOptions options{false, 1, 0, 0, p.speeds};
    options.progress = {[&seen](const SimulationProgress& now) { seen.push_back(now); }, 0};
    const EngineResult r = simulate_with(options);
    if (seen.size() < 10 || seen.size() != (r.ops_executed - 1) / kClockCheckOps) {
      return fmt::format("{} reports for {} ops", seen.size(), r.ops_executed);
    }
    for (size_t i = 0; i < seen.size(); ++i) {
      const SimulationProgress& now = seen[i];
      if (now.ops_executed != (i + 1) * kClockCheckOps || now.ops_total != r.ops_executed) {
        return fmt::format("report {}: {} of {} ops", i, now.ops_executed, now.ops_total);
      }
      if (i > 0 && (now.simulated_s < seen[i - 1].simulated_s || now.wall_s < seen[i - 1].wall_s)) {
        return fmt::format("report {} goes back in time", i);
      }
    }
    return "";
  };
  EXPECT_EQ(check([&](const EngineOptions& o) {
              return simulate(p.plan, p.ranks, p.pointers, p.tiers, *p.compute, o);
            }),
            "");
  IsolatedResult simgrid;
  run_isolated(
      1, {},
      [&](size_t) {
        IdealTransport transport(p.tiers);
        return nlohmann::json(check([&](const EngineOptions& o) {
          return simulate(p.plan, p.ranks, p.pointers, transport, *p.compute, o);
        }));
      },
      [&](size_t, IsolatedResult done) { simgrid = std::move(done); });
  ASSERT_TRUE(simgrid.ok) << simgrid.error;
  EXPECT_EQ(simgrid.value.get<std::string>(), "");
}

// A host that issues the ops (a dispatch time per op; synchronisations that hold it).
TEST(IdealEngine, AHostThatIssuesTheOpsRunsAsOnSimGrid) {
  for (const char* name : {"06-llama3-70b-256xh100.yaml", "11-deepseek-v2-lite-16xh100.yaml"}) {
    config::Scenario s = shipped(name);
    if (!s.cluster.hardware.stack) s.cluster.hardware.stack.emplace();
    s.cluster.hardware.stack->parameters[config::StackParameter::kHostDispatch] = 40e-6;
    expect_same_as_simgrid(s, false, 2);
  }
}

// The max-events budget stops both after the same op, at the same simulated time.
TEST(IdealEngine, BudgetsStopAsOnSimGrid) {
  for (const uint64_t max_events : {1, 37, 5000, 123457}) {
    expect_same_as_simgrid(shipped("03-gpt3-175b-64xa100.yaml"), false, 1, max_events);
  }
}

// Both engines report a receive whose send never comes, naming only the rank that waits, instead of
// hanging.
TEST(IdealEngine, AReceiveWithoutItsSendIsReportedNotHung) {
  config::Parallelism parallelism;
  parallelism.dp = 2;
  const workload::ParallelPlan plan(parallelism);
  workload::Graph waiting;
  workload::Op recv;
  recv.kind = workload::OpKind::kRecv;
  recv.stream = workload::Stream::kP2p;
  recv.label = workload::OpLabel::kPpComm;
  recv.bytes = 1024;
  recv.p2p = {1, 7};
  waiting.add(recv, {});
  workload::Graph idle;
  workload::Op compute;
  compute.kind = workload::OpKind::kMemory;
  compute.bytes = 1e6;
  idle.add(compute, {});
  config::HardwareProfile profile;
  profile.gpu.hbm_bandwidth_bytes_per_s = 1e12;
  WarningLog warnings;
  const cost::ComputeModel model(profile, &warnings);
  const EngineOptions options{true, 1};
  std::string loop;
  try {
    simulate(plan, {0, 1}, {&waiting, &idle}, cost::IdealTiers{}, model, options);
    FAIL() << "expected a DeadlockError";
  } catch (const DeadlockError& e) {
    loop = e.what();
  }
  EXPECT_NE(loop.find("stopped at t = 0.000001 s with ops that can never run"), std::string::npos) << loop;
  EXPECT_NE(
      loop.find("\n  rank 0 stream p2p: op 0 (recv pp_comm, layer -1, micro-batch -1) with rank 1 tag 7"),
      std::string::npos)
      << loop;
  EXPECT_EQ(loop.find("rank 1"), loop.find("rank 1 tag 7")) << loop;
  const IsolatedResult simgrid = in_child([&] {
    IdealTransport transport(cost::IdealLinks{});
    return std::vector{simulate(plan, {0, 1}, {&waiting, &idle}, transport, model, options)};
  });
  EXPECT_FALSE(simgrid.ok);
  EXPECT_EQ(simgrid.error, loop);
}

// Several jobs on one cluster (each on GPUs of its own, the second starting later): the first job to
// get through its iterations keeps iterating while the other still runs.
TEST(IdealEngine, SeveralJobsRunAsOnSimGrid) {
  const Prepared a(shipped("01-gpt3-1.3b-dp8.yaml"), Ranks::kCollapsed);
  const Prepared b(shipped("02-megatron-22b-tp8.yaml"), Ranks::kCollapsed);
  std::vector<int64_t> second_node(8);
  for (int64_t r = 0; r < 8; ++r) second_node[static_cast<size_t>(r)] = 8 + r;
  const std::vector<Job> jobs{
      Job{&a.plan, a.ranks, a.pointers, a.compute.get(), a.speeds, {}, 0},
      Job{&b.plan, b.ranks, b.pointers, b.compute.get(), b.speeds, second_node, 0.75}};
  const JobsOptions options{2, 0, 0};
  const Figures loop = flatten([&] { return simulate_jobs(jobs, a.tiers, options); });
  const Figures simgrid = simgrid_figures([&] {
    IdealTransport transport(a.tiers);
    return simulate_jobs(jobs, transport, options);
  });
  expect_same(loop, simgrid, [](size_t i) { return fmt::format("figure #{}", i); });
}

}  // namespace
}  // namespace trainsim::engine
