// trainsim search: the plan space, the candidate checks, the memory bound and, on a case small enough
// to simulate every plan, the search against brute force.
#include "sim/search/search.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/analytic/memory_bound.h"
#include "sim/common/isolated.h"
#include "sim/config/emit.h"
#include "sim/config/loader.h"
#include "sim/engine/scenario_run.h"
#include "sim/estimate/iteration_time.h"
#include "sim/report/run_report.h"
#include "sim/search/advice.h"
#include "sim/search/candidate.h"
#include "sim/search/plan_space.h"
#include "sim/search/report.h"
#include "sim/search/screening.h"
#include "sim/workload/errors.h"

namespace trainsim::search {
namespace {

using config::Recompute;
using config::Schedule;
using config::SequenceParallel;
using nlohmann::json;

std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(TRAINSIM_SOURCE_DIR) / "tests/search/fixtures" / name;
}

// The tiny model on 2 GPUs; `hardware` replaces the profile, `attention` the attention kernel.
config::Scenario tiny(const std::string& hardware = "", const std::string& attention = "") {
  std::vector<config::Override> overrides;
  if (!hardware.empty())
    overrides.push_back(config::parse_override("cluster.hardware=" + fixture(hardware).string()));
  if (!attention.empty()) overrides.push_back(config::parse_override("model.attention=" + attention));
  return config::load_scenario(fixture("tiny.yaml"), overrides);
}

TEST(PlanSpace, CoversEveryDegreeScheduleKindAndMicroBatch) {
  const config::Scenario base = tiny();
  const PlanSpace space = enumerate_plans(base, 2);
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> degrees;
  std::set<SequenceParallel> kinds;
  std::set<std::pair<Schedule, int64_t>> schedules;
  std::set<int64_t> chunks, micro_batches;
  std::set<config::CpComm> cp_comms;
  for (const PlanChoice& c : space.layouts) {
    if (c.sequence_parallel == SequenceParallel::kRing) cp_comms.insert(c.cp_comm);
    EXPECT_EQ(c.tp * c.pp * c.sp * c.dp, 2) << c.describe();
    EXPECT_EQ(base.training.global_batch % (c.micro_batch * c.dp), 0) << c.describe();
    degrees.insert({c.tp, c.pp, c.sp, c.dp});
    kinds.insert(c.sequence_parallel);
    schedules.insert({c.schedule, c.vpp});
    if (c.sequence_parallel == SequenceParallel::kFpdt) chunks.insert(c.fpdt_chunk_tokens);
    micro_batches.insert(c.micro_batch);
  }
  EXPECT_EQ(degrees, (std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
                         {2, 1, 1, 1}, {1, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 2}}));
  EXPECT_EQ(kinds.size(), 5u);  // none, megatron (tp 2), ulysses, ring, fpdt (sp 2)
  EXPECT_EQ(schedules, (std::set<std::pair<Schedule, int64_t>>{{Schedule::kOneFOneB, 1},
                                                               {Schedule::kGpipe, 1},
                                                               {Schedule::kInterleaved, 2},
                                                               {Schedule::kZeroBubble, 1},
                                                               {Schedule::kZeroBubble, 2},
                                                               {Schedule::kZbV, 2},
                                                               {Schedule::kDualPipeV, 2}}));
  EXPECT_EQ(chunks, (std::set<int64_t>{4, 8, 16, 32, 64, 128, 256}));  // 256 / u, u = 1 .. 64
  EXPECT_EQ(micro_batches, (std::set<int64_t>{1, 2}));
  EXPECT_EQ(cp_comms, (std::set<config::CpComm>{config::CpComm::kP2p, config::CpComm::kAllGather}));
  // tp 2: {none, megatron} x 2 micro-batches; pp 2: {1f1b, gpipe, interleaved, zero bubble with and
  // without chunks, zb-v, dualpipev} x 2; sp 2: {ulysses, ring by p2p and by all-gather, 7 FPDT chunks}
  // x 2; dp 2: micro-batch 1.
  EXPECT_EQ(space.layouts.size(), 4u + 14u + 20u + 1u);
  ASSERT_EQ(space.size(), space.layouts.size() * 12);
  std::set<std::pair<int, Recompute>> variants;
  for (size_t i = 0; i < kVariantsPerLayout; ++i)
    variants.insert({space.at(i).zero_stage, space.at(i).recompute});
  EXPECT_EQ(variants.size(), 12u);
}

// Pins hold the space to the values given: exactly the unpinned space's plans that have them.
TEST(PlanSpace, PinsKeepExactlyThePlansWithTheirValues) {
  const config::Scenario base = tiny();
  const PlanSpace whole = enumerate_plans(base, 2);
  PlanPins pins;
  pins.pp = {1};
  pins.schedule = {Schedule::kOneFOneB};
  pins.sequence_parallel = {SequenceParallel::kNone, SequenceParallel::kMegatron};
  pins.zero_stage = {1, 3};
  pins.recompute = {Recompute::kFull};
  pins.max_tp = 2;
  const PlanSpace held = enumerate_plans(base, 2, pins);
  EXPECT_EQ(pins.describe(),
            "tp <= 2; pp 1; schedule 1f1b; sequence_parallel none,megatron; zero 1,3; recompute full");
  ASSERT_EQ(held.variants(), 2u);
  std::vector<std::string> expected;
  for (size_t i = 0; i < whole.size(); ++i) {
    const PlanChoice c = whole.at(i);
    if (c.pp == 1 && c.schedule == Schedule::kOneFOneB && c.sp == 1 &&
        (c.zero_stage == 1 || c.zero_stage == 3) && c.recompute == Recompute::kFull) {
      expected.push_back(c.describe());
    }
  }
  std::vector<std::string> got;
  for (size_t i = 0; i < held.size(); ++i) got.push_back(held.at(i).describe());
  EXPECT_EQ(got, expected);
  EXPECT_FALSE(got.empty());
  pins.tp = {3};
  EXPECT_EQ(enumerate_plans(base, 2, pins).size(), 0u);
}

TEST(Search, RefusesPinsThatLeaveNoPlan) {
  SearchOptions options;
  options.gpus = 2;
  options.network = engine::NetworkModel::kIdeal;
  options.pins.tp = {3};
  try {
    run_search(tiny(), options);
    ADD_FAILURE() << "searched an empty space";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("on 2 GPUs has tp 3: the pins leave nothing to search"),
              std::string::npos)
        << e.what();
  }
}

TEST(PlanSpace, MixturesOfExpertsAddExpertParallelismAndFolding) {
  const config::Scenario moe = config::load_scenario(
      fixture("tiny.yaml"),
      {config::parse_override("model.moe={experts: 4, top_k: 2, expert_ffn_hidden: 512}")});
  std::set<std::tuple<int64_t, int64_t, int64_t>> experts;  // (tp, expert_tp, ep)
  for (const PlanChoice& c : enumerate_plans(moe, 2).layouts) experts.insert({c.tp, c.expert_tp, c.ep});
  // dp 2: ep 1 or 2; tp 2: expert_tp 2 (0, as tp) with ep 1, or folded (expert_tp 1) with ep 1 or 2.
  EXPECT_EQ(experts, (std::set<std::tuple<int64_t, int64_t, int64_t>>{
                         {1, 0, 1}, {1, 0, 2}, {2, 0, 1}, {2, 1, 1}, {2, 1, 2}}));
}

TEST(Candidate, IsTheScenarioTheLoaderGives) {
  const config::Scenario base = tiny();
  const CandidateBuilder builder(base);
  PlanChoice c;
  c.pp = 2;
  c.vpp = 2;
  c.schedule = Schedule::kInterleaved;
  c.zero_stage = 1;
  c.recompute = Recompute::kSelective;
  c.micro_batch = 1;
  const CandidateCheck check = builder.check(c, 2);
  ASSERT_TRUE(check.scenario) << check.rejection.message;
  // The same plan written as a scenario file that extends the fixture.
  const std::filesystem::path file = std::filesystem::path(TRAINSIM_BINARY_DIR) / "tests/search/plan.yaml";
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << "schema_version: 1\nextends: " << fixture("tiny.yaml").string()
                      << "\nparallelism: {pp: 2, dp: 1, vpp: 2, schedule: interleaved, zero_stage: 1, "
                         "recompute: selective}\n";
  config::Scenario loaded = config::load_scenario(file);
  loaded.path = base.path;  // to_yaml writes file references relative to the scenario
  EXPECT_EQ(config::to_yaml(*check.scenario), config::to_yaml(loaded));
  EXPECT_EQ(check.scenario->cluster.hardware.name, "small-gpu");
  EXPECT_EQ(c.overrides_from(base, 2),
            (std::vector<std::string>{"parallelism.pp=2", "parallelism.dp=1", "parallelism.vpp=2",
                                      "parallelism.schedule=interleaved", "parallelism.zero_stage=1",
                                      "parallelism.recompute=selective"}));
}

// The scenario's expert all-to-all overlap follows each plan where Megatron-Core can run it; a plan
// that cannot turns it off, and its --set arguments say so.
TEST(Candidate, KeepsTheAllToAllOverlapWhereThePlanCanRunIt) {
  const config::Scenario base = config::load_scenario(
      fixture("tiny.yaml"),
      {config::parse_override("model.moe={experts: 4, top_k: 2, expert_ffn_hidden: 512}"),
       config::parse_override("parallelism={dp: 2, ep: 2, ep_comm_overlap: true}")});
  const CandidateBuilder builder(base);
  PlanChoice experts;
  experts.dp = 2;
  experts.ep = 2;
  const CandidateCheck on = builder.check(experts, 2);
  ASSERT_TRUE(on.scenario) << on.rejection.message;
  EXPECT_TRUE(on.scenario->parallelism.ep_comm_overlap);
  EXPECT_TRUE(experts.overrides_from(base, 2).empty());
  PlanChoice dense = experts;  // ep 1: no all-to-all to hide
  dense.ep = 1;
  const CandidateCheck off = builder.check(dense, 2);
  ASSERT_TRUE(off.scenario) << off.rejection.message;
  EXPECT_FALSE(off.scenario->parallelism.ep_comm_overlap);
  EXPECT_EQ(dense.overrides_from(base, 2),
            (std::vector<std::string>{"parallelism.ep=1", "parallelism.ep_comm_overlap=false"}));
}

TEST(Candidate, IsRejectedByTheScenarioRules) {
  const CandidateBuilder builder(tiny());
  PlanChoice c;  // interleaving without pipeline stages
  c.dp = 2;
  c.vpp = 2;
  c.schedule = Schedule::kInterleaved;
  const CandidateCheck check = builder.check(c, 2);
  ASSERT_FALSE(check.scenario);
  EXPECT_EQ(check.rejection.rule, "schedule-needs-pipeline");
  EXPECT_EQ(check.rejection.message, "parallelism.schedule: schedule interleaved needs pp > 1");
}

// The base scenario's stragglers go with every candidate, checked against the candidate's cluster.
TEST(Candidate, KeepsTheStragglers) {
  std::vector<config::Override> overrides = {
      config::parse_override("stragglers={slow_gpus: [{ranks: [1], speed: 0.5}]}")};
  const CandidateBuilder builder(config::load_scenario(fixture("tiny.yaml"), overrides));
  PlanChoice c;
  c.dp = 2;
  const CandidateCheck on_two = builder.check(c, 2);
  ASSERT_TRUE(on_two.scenario) << on_two.rejection.message;
  ASSERT_EQ(on_two.scenario->stragglers.slow_gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(on_two.scenario->stragglers.slow_gpus[0].speed, 0.5);
  c.dp = 1;
  const CandidateCheck on_one = builder.check(c, 1);
  ASSERT_FALSE(on_one.scenario);
  EXPECT_THAT(on_one.rejection.message, testing::HasSubstr("rank 1 is not in this cluster"));
}

// The base scenario's framework goes with every candidate: torchtitan runs FSDP under pipelining,
// keeps parameters gathered there by default, and has no ZeRO-1.
TEST(Candidate, KeepsTheFrameworkAndItsDefaults) {
  const CandidateBuilder builder(
      config::load_scenario(fixture("tiny.yaml"), {config::parse_override("framework=torchtitan")}));
  PlanChoice c;
  c.pp = 2;
  c.zero_stage = 3;
  const CandidateCheck fsdp = builder.check(c, 2);
  ASSERT_TRUE(fsdp.scenario) << fsdp.rejection.message;
  EXPECT_EQ(fsdp.scenario->framework, config::Framework::kTorchtitan);
  EXPECT_FALSE(fsdp.scenario->reshard_after_forward());  // torchtitan's default with pp > 1
  c.pp = 1;
  c.dp = 2;
  EXPECT_TRUE(builder.check(c, 2).scenario->reshard_after_forward());
  c.zero_stage = 1;
  const CandidateCheck zero1 = builder.check(c, 2);
  ASSERT_FALSE(zero1.scenario);
  EXPECT_THAT(zero1.rejection.message,
              testing::HasSubstr("torchtitan shards data-parallel state with FSDP2 only"));
}

TEST(Candidate, KeepsTheCampaign) {
  std::vector<config::Override> overrides = {config::parse_override(
      "campaign={tokens: 1B, checkpoints: {write_bandwidth: 1GB/s, async: true, interval: 1h}}")};
  const CandidateBuilder builder(config::load_scenario(fixture("tiny.yaml"), overrides));
  PlanChoice c;
  c.dp = 2;
  const CandidateCheck check = builder.check(c, 2);
  ASSERT_TRUE(check.scenario) << check.rejection.message;
  EXPECT_DOUBLE_EQ(check.scenario->campaign.tokens, 1e9);
  ASSERT_TRUE(check.scenario->campaign.checkpoints.has_value());
  EXPECT_TRUE(check.scenario->campaign.checkpoints->async);
  EXPECT_DOUBLE_EQ(check.scenario->campaign.checkpoints->interval_s, 3600);
}

TEST(Candidate, KeepsTheScenariosPrice) {
  std::vector<config::Override> overrides = {config::parse_override("cluster.cost.price_per_gpu_hour=3USD")};
  const CandidateBuilder builder(config::load_scenario(fixture("tiny.yaml"), overrides));
  PlanChoice c;
  c.dp = 2;
  const CandidateCheck check = builder.check(c, 2);
  ASSERT_TRUE(check.scenario) << check.rejection.message;
  EXPECT_EQ(check.scenario->cluster.hardware.cost.price_per_gpu_hour_usd, 3.0);
  EXPECT_NE(builder.yaml(c, 2).find("price_per_gpu_hour: 3USD"), std::string::npos);
}

// A candidate runs on the base's cluster, what-ifs included, and its YAML (best[].scenario_yaml) says so.
TEST(Candidate, KeepsTheWhatIfs) {
  std::vector<config::Override> overrides = {
      config::parse_override("cluster.hardware_set.gpu.hbm.capacity=40GiB"),
      config::parse_override("cluster.topology_set.node.intra.bandwidth=100GB/s")};
  const CandidateBuilder builder(config::load_scenario(fixture("tiny.yaml"), overrides));
  PlanChoice c;
  c.dp = 2;
  const CandidateCheck check = builder.check(c, 2);
  ASSERT_TRUE(check.scenario) << check.rejection.message;
  EXPECT_DOUBLE_EQ(check.scenario->cluster.hardware.gpu.hbm_capacity_bytes, 40.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(check.scenario->cluster.topology.node.intra.link.bandwidth_bytes_per_s, 100e9);
  const std::string yaml = builder.yaml(c, 2);
  EXPECT_THAT(yaml,
              testing::HasSubstr("topology_set:\n    node:\n      intra:\n        bandwidth: 100GB/s\n"));
  EXPECT_THAT(yaml, testing::HasSubstr("hardware_set:\n    gpu:\n      hbm:\n        capacity: 40GiB\n"));
}

// The changes advice proposes load as they are written, fit, are predicted faster than the run, fastest
// first, and their predictions are the estimate scaled by the scenario's own simulated / estimated ratio.
TEST(Advice, ProposesValidFasterPlansScaledByTheRun) {
  const config::Scenario s =
      config::load_scenario(fixture("tiny.yaml"), {config::parse_override("cluster.gpus=4"),
                                                   config::parse_override("training.global_batch=8"),
                                                   config::parse_override("parallelism.recompute=full"),
                                                   config::parse_override("parallelism.zero_stage=3")});
  WarningLog warnings;
  const double own_s = estimate::estimate_iteration_time(s, &warnings).iteration_s;
  const double simulated_s = 1.25 * own_s;
  const std::vector<PlanChange> changes = advise(s, simulated_s, 3);
  ASSERT_FALSE(changes.empty());  // dropping full recomputation at least
  EXPECT_LE(changes.size(), 3u);
  for (size_t i = 0; i < changes.size(); ++i) {
    const PlanChange& c = changes[i];
    EXPECT_LT(c.predicted_s, 0.99 * simulated_s);
    EXPECT_NEAR(c.predicted_s, 1.25 * c.estimated_s, 1e-12 * c.predicted_s);
    if (i > 0) {
      EXPECT_LE(changes[i - 1].predicted_s, c.predicted_s);
    }
    std::vector<config::Override> overrides = {config::parse_override("cluster.gpus=4"),
                                               config::parse_override("training.global_batch=8"),
                                               config::parse_override("parallelism.recompute=full"),
                                               config::parse_override("parallelism.zero_stage=3")};
    std::istringstream words(c.change);
    for (std::string word; words >> word;) {
      if (word != "--set") overrides.push_back(config::parse_override(word));
    }
    const config::Scenario changed = config::load_scenario(fixture("tiny.yaml"), overrides);
    EXPECT_DOUBLE_EQ(estimate::estimate_iteration_time(changed, &warnings).iteration_s, c.estimated_s)
        << c.change;
  }
}

TEST(Search, TokensPerDollarWithoutAPriceNamesTheProfileAndKey) {
  SearchOptions options;
  options.gpus = 2;
  options.objective = Objective::kTokensPerDollar;
  try {
    run_search(tiny(), options);
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].path, "cost.price_per_gpu_hour");
    EXPECT_THAT(e.diagnostics()[0].location.file, testing::HasSubstr("small-gpu.yaml"));
    EXPECT_THAT(e.what(), testing::HasSubstr("profile small-gpu has no price"));
  }
}

TEST(Search, RejectsOptionsOutOfRange) {
  const config::Scenario base = tiny();
  for (const auto& [gpus, top, jobs, margin] :
       {std::make_tuple(8, 1, 1, 0.5), std::make_tuple(0, 1, 1, 0.5), std::make_tuple(2, 0, 1, 0.5),
        std::make_tuple(2, 1, 0, 0.5), std::make_tuple(2, 1, 1, -1.0)}) {
    SearchOptions options;
    options.gpus = gpus;
    options.top = top;
    options.jobs = jobs;
    options.margin = margin;
    EXPECT_THROW(run_search(base, options), std::invalid_argument) << gpus << " " << top << " " << jobs;
  }
}

// Every plan of the tiny case simulated: the search must find the same best plans, the memory bound
// must never exceed a simulated peak nor the kernel-time bound a closed-form time, and the counts must
// add up. With the fused attention kernel, so
// that ring attention and FPDT plans are valid and selective recompute duplicates recompute none.
TEST(Search, FindsTheBestPlansBruteForceFinds) {
  const config::Scenario base = tiny("", "fused");
  const PlanSpace space = enumerate_plans(base, 2);
  const CandidateBuilder builder(base);
  std::vector<size_t> valid;
  int64_t invalid = 0;
  for (size_t layout = 0; layout < space.layouts.size(); ++layout) {
    if (builder.check(space.layouts[layout], 2).scenario) {
      for (size_t v = 0; v < kVariantsPerLayout; ++v) valid.push_back(layout * kVariantsPerLayout + v);
    } else {
      invalid += static_cast<int64_t>(kVariantsPerLayout);
    }
  }
  std::map<size_t, json> truth;  // plan index -> {time, fits, peak, bound}
  IsolatedOptions isolated;
  isolated.jobs = 2;
  run_isolated(
      valid.size(), isolated,
      [&](size_t i) -> json {
        const CandidateCheck check = builder.check(space.at(valid[i]), 2);
        if (!check.scenario) return {{"invalid", check.rejection.message}};  // e.g. ZeRO-2 with pp > 1
        const config::Scenario& s = *check.scenario;
        try {
          const double bound = analytic::memory_lower_bound(s).total();
          WarningLog warnings;
          const double closed_form_s = estimate::estimate_iteration_time(s, &warnings).iteration_s;
          const double lower_bound_s = estimate::iteration_lower_bound_s(s);
          engine::RunOptions options;
          options.network = engine::NetworkModel::kIdeal;
          const auto run = engine::run_scenario(s, options);
          const json report = to_json(report::make_run_report(s, *run, {"", "ideal", false, 1}));
          return {{"time", report.at("iteration_time_s")},
                  {"fits", report.at("memory").at("fits")},
                  {"peak", report.at("memory").at("peak_hbm_bytes")},
                  {"bound", bound},
                  {"closed_form", closed_form_s},
                  {"lower_bound", lower_bound_s}};
        } catch (const workload::PlanError& e) {
          return {{"invalid", e.what()}};
        }
      },
      [&](size_t i, IsolatedResult r) {
        ASSERT_TRUE(r.ok) << space.at(valid[i]).describe() << ": " << r.error;
        truth[valid[i]] = r.value;
      });

  // A selective-recompute plan that simulates exactly like its recompute-none twin (same layout and
  // ZeRO stage, the variant before it) is the same plan: the search must count it, not rank it.
  std::set<size_t> duplicates;
  for (const auto& [index, t] : truth) {
    if (space.at(index).recompute != config::Recompute::kSelective || t.contains("invalid")) continue;
    const json& twin = truth.at(index - 1);
    ASSERT_EQ(space.at(index - 1).recompute, config::Recompute::kNone);
    if (!twin.contains("invalid") && t.at("time") == twin.at("time") && t.at("peak") == twin.at("peak")) {
      duplicates.insert(index);
    }
  }
  ASSERT_FALSE(duplicates.empty()) << "the case should exercise the duplicate plans";

  const double capacity = base.usable_hbm_bytes();  // the HBM less the allocator's headroom
  std::vector<std::pair<double, size_t>> ranking;   // (time, index) of the plans that fit
  int64_t over_bound = 0;
  for (const auto& [index, t] : truth) {
    if (t.contains("invalid")) {
      ++invalid;
      continue;
    }
    if (duplicates.count(index) > 0) continue;
    EXPECT_LE(t.at("bound").get<double>(), t.at("peak").get<double>()) << space.at(index).describe();
    EXPECT_LE(t.at("lower_bound").get<double>(), t.at("closed_form").get<double>())
        << space.at(index).describe();
    if (t.at("bound").get<double>() > capacity) ++over_bound;
    if (t.at("fits").get<bool>()) ranking.emplace_back(t.at("time").get<double>(), index);
  }
  std::sort(ranking.begin(), ranking.end());
  ASSERT_GE(ranking.size(), 3u);
  ASSERT_GT(over_bound, 0) << "the case should exercise the memory bound";

  SearchOptions options;
  options.gpus = 2;
  options.top = 3;
  options.jobs = 2;
  options.network = engine::NetworkModel::kIdeal;
  options.margin = default_margin(options.network);
  const SearchResult result = run_search(base, options);
  ASSERT_EQ(result.best.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(result.best[k].index, ranking[k].second)
        << "rank " << k + 1 << ": search " << result.best[k].plan.describe() << ", brute force "
        << space.at(ranking[k].second).describe();
    EXPECT_DOUBLE_EQ(result.best[k].run.at("iteration_time_s").get<double>(), ranking[k].first);
  }
  EXPECT_EQ(result.enumerated, static_cast<int64_t>(space.size()));
  EXPECT_EQ(result.invalid_plans(), invalid);
  EXPECT_EQ(result.over_memory_bound, over_bound);
  EXPECT_EQ(result.duplicates, static_cast<int64_t>(duplicates.size()));
  EXPECT_EQ(result.invalid_plans() + result.duplicates + result.over_memory_bound + result.kernel_time_bound +
                result.slower_bound + result.simulated,
            result.enumerated);
  EXPECT_EQ(result.simulated_over_memory + static_cast<int64_t>(result.failures.size()) + result.feasible(),
            result.simulated);
  EXPECT_GT(result.slower_bound, 0) << "the case should exercise the time bound";
  EXPECT_GT(result.kernel_time_bound, 0) << "the case should exercise the kernel-time bound";
  EXPECT_LE(result.closed_form.spread, 1 + options.margin);
}

// With SimGrid, the plans ranked on the ideal network are refined: with refine margin 0 only the K
// best (and those tied with the K-th) are simulated on SimGrid, with an unbounded one every fitting
// plan, and both agree on the best.
TEST(Search, RefinesTheBestIdealPlansOnSimGrid) {
  const config::Scenario base = tiny();
  SearchOptions options;
  options.gpus = 2;
  options.top = 2;
  options.jobs = 2;
  options.network = engine::NetworkModel::kSimgrid;
  options.refine_margin = 0;
  const SearchResult narrow = run_search(base, options);
  EXPECT_GE(narrow.refined, 2);
  EXPECT_EQ(narrow.ranked, narrow.refined);
  options.refine_margin = 1e9;
  const SearchResult all = run_search(base, options);
  EXPECT_EQ(all.refined, all.feasible());
  EXPECT_GT(all.refined, narrow.refined);
  ASSERT_EQ(all.best.size(), 2u);
  EXPECT_EQ(all.best[0].index, narrow.best[0].index);
  EXPECT_EQ(all.best[0].run.at("iteration_time_s"), narrow.best[0].run.at("iteration_time_s"));
  EXPECT_LE(all.refine.spread, 1 + kDefaultRefineMargin);
  EXPECT_EQ(to_json(all).at("counts").at("refined"), all.refined);
}

// With 16 micro-batches per replica, step 3 simulates each pipelined plan at its schedule's two
// steady-state counts and extrapolates, and so does the refinement on SimGrid; the full simulations
// of step 4 (every fitting plan, with a K that large) must agree to rounding, for every schedule of
// pp = 2 and on both networks. (tools/bench-search checks the same at pp 8 on GPT-3 175B.)
TEST(Search, ExtrapolatesPipelinesExactlyFromTheirSteadyState) {
  const config::Scenario base = config::load_scenario(
      fixture("tiny.yaml"), {config::parse_override("training.global_batch=16"),
                             config::parse_override("cluster.hardware_set.gpu.hbm.capacity=1GiB")});
  for (const engine::NetworkModel network : {engine::NetworkModel::kIdeal, engine::NetworkModel::kSimgrid}) {
    SCOPED_TRACE(engine::to_string(network));
    SearchOptions options;
    options.gpus = 2;
    options.top = 1000;
    options.jobs = 2;
    options.network = network;
    options.refine_margin = 1e9;
    options.pins.pp = {2};
    options.pins.micro_batch = {1};
    const SearchResult result = run_search(base, options);
    EXPECT_EQ(result.reported, result.ranked);
    std::set<Schedule> schedules;
    for (const SimulatedPlan& p : result.best) {
      schedules.insert(p.plan.schedule);
      const double extrapolated_s = network == engine::NetworkModel::kIdeal ? p.ranking_s : p.refined_s;
      EXPECT_NEAR(extrapolated_s / p.run.at("iteration_time_s").get<double>(), 1, 1e-9) << p.plan.describe();
    }
    EXPECT_THAT(schedules,
                ::testing::IsSupersetOf({Schedule::kGpipe, Schedule::kOneFOneB, Schedule::kInterleaved,
                                         Schedule::kZeroBubble, Schedule::kZbV, Schedule::kDualPipeV}));
    EXPECT_NEAR(result.extrapolation.min, 1, 1e-9);
    EXPECT_NEAR(result.extrapolation.max, 1, 1e-9);
  }
}

// A scenario whose stack overlaps the expert all-to-alls (ep_comm_overlap): every plan is screened
// and simulated with the overlap where Megatron-Core can run it (expert parallelism, one stage or the
// interleaved schedule, no full recompute) and without it elsewhere, none refused for it; the paired
// schedules extrapolate exactly from their steady state too.
TEST(Search, AppliesTheAllToAllOverlapWherePlansCanRunIt) {
  const config::Scenario base = config::load_scenario(
      fixture("tiny.yaml"),
      {config::parse_override("model.moe={experts: 4, top_k: 2, expert_ffn_hidden: 512}"),
       config::parse_override("training.global_batch=16"),
       config::parse_override("parallelism={dp: 2, ep: 2, ep_comm_overlap: true}")});
  SearchOptions options;
  options.gpus = 4;
  options.top = 1000;
  options.jobs = 2;
  options.network = engine::NetworkModel::kIdeal;
  options.pins.pp = {1, 2};
  options.pins.micro_batch = {1};
  options.pins.zero_stage = {1};
  const SearchResult result = run_search(base, options);
  for (const RuleCount& r : result.invalid) EXPECT_EQ(r.rule.rfind("ep-comm-overlap", 0), std::string::npos);
  int overlapped = 0;
  for (const SimulatedPlan& p : result.best) {
    const config::Scenario s = config::load_scenario_text(p.scenario_yaml, base.path);
    const config::Parallelism& q = s.parallelism;
    const bool can =
        q.ep > 1 && q.recompute != Recompute::kFull &&
        (q.schedule == Schedule::kInterleaved || (q.pp == 1 && q.schedule == Schedule::kOneFOneB));
    EXPECT_EQ(q.ep_comm_overlap, can) << p.plan.describe();
    overlapped += can;
    EXPECT_NEAR(p.ranking_s / p.run.at("iteration_time_s").get<double>(), 1, 1e-9) << p.plan.describe();
  }
  EXPECT_GT(overlapped, 0);
  EXPECT_LT(overlapped, static_cast<int>(result.best.size()));
}

// Step 2b estimates the candidates in lower-bound order and stops where none left can matter: each one
// left has a lower bound, and so a closed form, above (1 + margin) x the closed form of the K-th
// estimated plan that fits. estimate_up_to then estimates the rest, and the survivors stay in
// closed-form order, each above its lower bound.
TEST(Screening, EstimatesInLowerBoundOrderUpToTheWaitLine) {
  const config::Scenario base = tiny("", "fused");
  const PlanSpace space = enumerate_plans(base, 2);
  const CandidateBuilder builder(base);
  Screening screening = screen(builder, space, 2);
  ASSERT_TRUE(std::is_sorted(
      screening.candidates.begin(), screening.candidates.end(),
      [](const Candidate& a, const Candidate& b) { return a.lower_bound_s < b.lower_bound_s; }));
  std::map<size_t, double> lower_bound_s;
  for (const Candidate& c : screening.candidates) lower_bound_s[c.index] = c.lower_bound_s;

  const double margin = 0.05;
  estimate_in_order(builder, space, 2, 1, margin, screening);
  ASSERT_GT(screening.waiting(), 0) << "the case should leave candidates waiting";
  const auto first_fit = std::find_if(screening.survivors.begin(), screening.survivors.end(),
                                      [](const Survivor& s) { return s.fits; });
  ASSERT_NE(first_fit, screening.survivors.end());
  for (size_t i = screening.estimated; i < screening.candidates.size(); ++i) {
    EXPECT_GT(screening.candidates[i].lower_bound_s, (1 + margin) * first_fit->closed_form_s);
  }

  estimate_up_to(builder, space, 2, std::numeric_limits<double>::infinity(), screening);
  EXPECT_EQ(screening.waiting(), 0);
  ASSERT_EQ(screening.survivors.size(), screening.candidates.size());
  EXPECT_TRUE(
      std::is_sorted(screening.survivors.begin(), screening.survivors.end(),
                     [](const Survivor& a, const Survivor& b) { return a.closed_form_s < b.closed_form_s; }));
  for (const Survivor& s : screening.survivors) {
    EXPECT_LE(lower_bound_s.at(s.index), s.closed_form_s) << space.at(s.index).describe();
  }
}

TEST(Search, GivesTheSameResultWhateverTheJobs) {
  const config::Scenario base = tiny("small-gpu-priced.yaml");
  json results[2];
  for (int jobs : {1, 2}) {
    SearchOptions options;
    options.gpus = 2;
    options.top = 2;
    options.jobs = jobs;
    options.objective = Objective::kTokensPerDollar;
    options.network = engine::NetworkModel::kIdeal;
    results[jobs - 1] = to_json(run_search(base, options));
    results[jobs - 1].erase("timing");
  }
  EXPECT_EQ(results[0].dump(), results[1].dump());
  ASSERT_EQ(results[0].at("best").size(), 2u);
  const json& best = results[0].at("best")[0];
  EXPECT_DOUBLE_EQ(best.at("cost").at("tokens_per_usd").get<double>(),
                   best.at("tokens_per_s").get<double>() * 3600 / (2 * 2.50));
}

}  // namespace
}  // namespace trainsim::search
