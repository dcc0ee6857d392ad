// How long building the graphs and the closed-form analysis takes at production scale: Llama 3 405B
// on 16,384 GPUs, TP8 x CP16 (ring attention) x PP16 x DP8, 128Ki-token sequences, 16Mi tokens per
// iteration (Llama 3 paper, long-context stage), one graph per pipeline stage.
//   cmake -DTRAINSIM_BUILD_BENCHMARKS=ON ... && ./tests/workload/workload_benchmark
#include <benchmark/benchmark.h>

#include "sim/analytic/analysis.h"
#include "sim/workload/builder.h"
#include "sim/workload/summary.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim {
namespace {

config::Scenario llama405b(int64_t seq_len, int64_t global_batch, int64_t vpp) {
  testing::PlanSpec spec;
  spec.tp = 8;
  spec.sp = 16;
  spec.pp = 16;
  spec.dp = 8;
  spec.vpp = vpp;
  spec.schedule = vpp > 1 ? config::Schedule::kInterleaved : config::Schedule::kOneFOneB;
  spec.sequence = config::SequenceParallel::kRing;
  spec.zero = 1;
  config::Scenario s = testing::make_scenario("llama3-405b", global_batch, 1, spec);
  s.model.seq_len = seq_len;
  return s;
}

void run(benchmark::State& state, const config::Scenario& s) {
  size_t ops = 0;
  for (auto _ : state) {
    const workload::ParallelPlan plan = workload::make_plan(s);
    const std::vector<workload::Graph> graphs = workload::build_class_graphs(s, plan);
    const workload::WorkloadSummary summary = workload::summarize(s, plan, graphs);
    const analytic::Analysis analysis = analytic::analyze(s);
    benchmark::DoNotOptimize(analytic::compare(s, analysis, summary));
    ops = 0;
    for (const workload::Graph& g : graphs) ops += g.size();
  }
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["gpus"] = 16384;
}

// 128Ki tokens x 128 sequences: 16 micro-batches per replica.
void BM_Llama405B_16384Gpus_LongContext(benchmark::State& state) { run(state, llama405b(131072, 128, 1)); }
// 8Ki tokens x 2048 sequences: 256 micro-batches per replica, the largest graphs.
void BM_Llama405B_16384Gpus_ShortContext(benchmark::State& state) { run(state, llama405b(8192, 2048, 1)); }

BENCHMARK(BM_Llama405B_16384Gpus_LongContext)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Llama405B_16384Gpus_ShortContext)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainsim

BENCHMARK_MAIN();
