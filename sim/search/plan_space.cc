#include "sim/search/plan_space.h"

#include <algorithm>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/units.h"

namespace trainsim::search {
namespace {

using config::Schedule;
using config::SequenceParallel;

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

std::vector<SequenceParallel> kinds(int64_t tp, int64_t sp) {
  if (sp > 1) return {SequenceParallel::kUlysses, SequenceParallel::kRing, SequenceParallel::kFpdt};
  if (tp > 1) return {SequenceParallel::kNone, SequenceParallel::kMegatron};
  return {SequenceParallel::kNone};
}

std::vector<config::CpComm> cp_comms(SequenceParallel kind) {
  if (kind == SequenceParallel::kRing) return {config::CpComm::kP2p, config::CpComm::kAllGather};
  return {config::CpComm::kP2p};
}

std::vector<int64_t> fpdt_chunks(SequenceParallel kind, int64_t seq_len) {
  if (kind != SequenceParallel::kFpdt) return {0};
  std::vector<int64_t> out;
  for (int64_t u = 1; u <= kMaxFpdtChunks && seq_len / u > 0; u *= 2) out.push_back(seq_len / u);
  return out;
}

struct ScheduleChoice {
  Schedule schedule;
  int64_t vpp;
};

// The zero-bubble schedules are left out with FPDT, whose backward they do not split.
std::vector<ScheduleChoice> schedules(int64_t pp, int64_t layers, SequenceParallel kind) {
  std::vector<ScheduleChoice> out = {{Schedule::kOneFOneB, 1}};
  if (pp == 1) return out;
  out.push_back({Schedule::kGpipe, 1});
  const bool zero_bubble = kind != SequenceParallel::kFpdt;
  if (zero_bubble) out.push_back({Schedule::kZeroBubble, 1});
  for (int64_t v : divisors(layers / pp)) {
    if (v == 1) continue;
    out.push_back({Schedule::kInterleaved, v});
    if (zero_bubble) out.push_back({Schedule::kZeroBubble, v});
    if (zero_bubble && v == 2) {
      out.push_back({Schedule::kZbV, 2});
      out.push_back({Schedule::kDualPipeV, 2});
    }
  }
  return out;
}

}  // namespace

PlanChoice PlanChoice::of(const config::Scenario& s) {
  const config::Parallelism& p = s.parallelism;
  PlanChoice c;
  c.tp = p.tp;
  c.pp = p.pp;
  c.dp = p.dp;
  c.sp = p.sp;
  c.vpp = p.vpp;
  c.ep = p.ep;
  c.expert_tp = p.expert_tp;
  c.schedule = p.schedule;
  c.sequence_parallel = p.sequence_parallel;
  if (p.sequence_parallel == SequenceParallel::kRing) c.cp_comm = p.cp_comm;
  c.fpdt_chunk_tokens = p.sequence_parallel == SequenceParallel::kFpdt ? p.fpdt.chunk_tokens : 0;
  c.micro_batch = s.training.micro_batch;
  c.zero_stage = p.zero_stage;
  c.recompute = p.recompute;
  return c;
}

void PlanChoice::apply(int64_t gpus, config::Scenario& s) const {
  config::Parallelism& p = s.parallelism;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.sp = sp;
  p.vpp = vpp;
  p.ep = ep;
  p.expert_tp = expert_tp;
  p.schedule = schedule;
  p.sequence_parallel = sequence_parallel;
  if (sequence_parallel == SequenceParallel::kRing) p.cp_comm = cp_comm;
  if (sequence_parallel == SequenceParallel::kFpdt) p.fpdt.chunk_tokens = fpdt_chunk_tokens;
  p.zero_stage = zero_stage;
  p.recompute = recompute;
  // The scenario's expert all-to-all overlap where the plan can run it (a stack setting, not an axis).
  p.ep_comm_overlap =
      p.ep_comm_overlap && p.ep_comm_overlap_blocker() == config::Parallelism::EpOverlapBlocker::kNone;
  s.training.micro_batch = micro_batch;
  s.cluster.gpus = gpus;
}

std::vector<std::string> PlanChoice::overrides(int64_t gpus) const {
  std::vector<std::string> out = {
      fmt::format("cluster.gpus={}", gpus),
      fmt::format("parallelism.tp={}", tp),
      fmt::format("parallelism.pp={}", pp),
      fmt::format("parallelism.dp={}", dp),
      fmt::format("parallelism.sp={}", sp),
      fmt::format("parallelism.vpp={}", vpp),
      fmt::format("parallelism.ep={}", ep),
      fmt::format("parallelism.schedule={}", config::to_string(schedule)),
      fmt::format("parallelism.sequence_parallel={}", config::to_string(sequence_parallel)),
  };
  if (expert_tp > 0) out.push_back(fmt::format("parallelism.expert_tp={}", expert_tp));
  if (sequence_parallel == SequenceParallel::kRing) {
    out.push_back(fmt::format("parallelism.cp_comm={}", config::to_string(cp_comm)));
  }
  if (sequence_parallel == SequenceParallel::kFpdt) {
    out.push_back(fmt::format("parallelism.fpdt.chunk_tokens={}", config::format_count(fpdt_chunk_tokens)));
  }
  out.push_back(fmt::format("parallelism.zero_stage={}", zero_stage));
  out.push_back(fmt::format("parallelism.recompute={}", config::to_string(recompute)));
  out.push_back(fmt::format("training.micro_batch={}", micro_batch));
  return out;
}

std::vector<std::string> PlanChoice::overrides_from(const config::Scenario& base, int64_t gpus) const {
  const std::vector<std::string> unchanged = of(base).overrides(base.cluster.gpus);
  std::vector<std::string> out;
  for (const std::string& o : overrides(gpus)) {
    if (std::find(unchanged.begin(), unchanged.end(), o) == unchanged.end()) out.push_back(o);
  }
  config::Scenario plan = base;
  apply(gpus, plan);
  if (plan.parallelism.ep_comm_overlap != base.parallelism.ep_comm_overlap) {
    out.push_back("parallelism.ep_comm_overlap=false");
  }
  return out;
}

std::string PlanChoice::describe() const {
  std::string out = fmt::format("tp{} pp{} dp{}", tp, pp, dp);
  if (sp > 1) out += fmt::format(" sp{}", sp);
  if (vpp > 1) out += fmt::format(" vpp{}", vpp);
  if (ep > 1) out += fmt::format(" ep{}", ep);
  if (expert_tp > 0) out += fmt::format(" etp{}", expert_tp);
  out += fmt::format(" {}", config::to_string(schedule));
  if (sequence_parallel != SequenceParallel::kNone)
    out += fmt::format(" {}", config::to_string(sequence_parallel));
  if (sequence_parallel == SequenceParallel::kRing && cp_comm == config::CpComm::kAllGather)
    out += " all_gather";
  if (sequence_parallel == SequenceParallel::kFpdt) {
    out += fmt::format(" chunk{}", config::format_count(fpdt_chunk_tokens));
  }
  out += fmt::format(" zero{} {} mb{}", zero_stage, config::to_string(recompute), micro_batch);
  return out;
}

nlohmann::json PlanChoice::to_json() const {
  nlohmann::json out = {{"tp", tp},
                        {"pp", pp},
                        {"dp", dp},
                        {"sp", sp},
                        {"vpp", vpp},
                        {"ep", ep},
                        {"schedule", config::to_string(schedule)},
                        {"sequence_parallel", config::to_string(sequence_parallel)},
                        {"zero_stage", zero_stage},
                        {"recompute", config::to_string(recompute)},
                        {"micro_batch", micro_batch}};
  if (sequence_parallel == SequenceParallel::kRing) out["cp_comm"] = config::to_string(cp_comm);
  if (sequence_parallel == SequenceParallel::kFpdt) out["fpdt_chunk_tokens"] = fpdt_chunk_tokens;
  if (expert_tp > 0) out["expert_tp"] = expert_tp;
  return out;
}

namespace {

template <class T>
bool allowed(const std::vector<T>& pinned, const T& value) {
  return pinned.empty() || std::find(pinned.begin(), pinned.end(), value) != pinned.end();
}

template <class T>
void describe_pin(std::vector<std::string>& parts, std::string_view key, const std::vector<T>& values) {
  if (values.empty()) return;
  std::vector<std::string> texts;
  for (const T& v : values) {
    if constexpr (std::is_enum_v<T>) {
      texts.emplace_back(config::to_string(v));
    } else {
      texts.push_back(fmt::format("{}", v));
    }
  }
  parts.push_back(fmt::format("{} {}", key, fmt::join(texts, ",")));
}

}  // namespace

bool PlanPins::admits(const PlanChoice& c) const {
  return allowed(tp, c.tp) && allowed(pp, c.pp) && allowed(dp, c.dp) && allowed(sp, c.sp) &&
         allowed(vpp, c.vpp) && allowed(ep, c.ep) && allowed(micro_batch, c.micro_batch) &&
         allowed(schedule, c.schedule) && allowed(sequence_parallel, c.sequence_parallel) &&
         (max_tp == 0 || c.tp <= max_tp) && (max_pp == 0 || c.pp <= max_pp);
}

std::string PlanPins::describe() const {
  std::vector<std::string> parts;
  describe_pin(parts, "tp", tp);
  if (max_tp > 0) parts.push_back(fmt::format("tp <= {}", max_tp));
  describe_pin(parts, "pp", pp);
  if (max_pp > 0) parts.push_back(fmt::format("pp <= {}", max_pp));
  describe_pin(parts, "dp", dp);
  describe_pin(parts, "sp", sp);
  describe_pin(parts, "vpp", vpp);
  describe_pin(parts, "ep", ep);
  describe_pin(parts, "schedule", schedule);
  describe_pin(parts, "sequence_parallel", sequence_parallel);
  describe_pin(parts, "micro_batch", micro_batch);
  describe_pin(parts, "zero", zero_stage);
  describe_pin(parts, "recompute", recompute);
  return fmt::format("{}", fmt::join(parts, "; "));
}

PlanChoice PlanSpace::at(size_t index) const {
  PlanChoice c = layouts.at(index / variants());
  const size_t variant = index % variants();
  c.zero_stage = zero_stages[variant / recompute_modes.size()];
  c.recompute = recompute_modes[variant % recompute_modes.size()];
  return c;
}

PlanSpace enumerate_plans(const config::Scenario& s, int64_t gpus, const PlanPins& pins) {
  PlanSpace space;
  space.gpus = gpus;
  if (!pins.zero_stage.empty()) space.zero_stages = pins.zero_stage;
  if (!pins.recompute.empty()) space.recompute_modes = pins.recompute;
  const int64_t batch = s.training.global_batch;
  for (int64_t tp : divisors(gpus)) {
    for (int64_t pp : divisors(gpus / tp)) {
      for (int64_t sp : divisors(gpus / (tp * pp))) {
        const int64_t dp = gpus / (tp * pp * sp);
        const std::vector<int64_t> micro_batches =
            batch % dp == 0 ? divisors(batch / dp) : std::vector<int64_t>{1};
        // (expert_tp, ep): ep among the divisors of dp that divide the experts (1 for a dense
        // model); with tp > 1 also expert_tp 1, ep folding the tp ranks in (plan_space.h).
        std::vector<std::pair<int64_t, int64_t>> eps;
        const bool moe = s.model.moe.enabled();
        for (const int64_t ep : divisors(dp)) {
          if (ep == 1 || (moe && s.model.moe.experts % ep == 0)) eps.emplace_back(0, ep);
        }
        if (moe && tp > 1) {
          for (const int64_t ep : divisors(tp * dp)) {
            if (s.model.moe.experts % ep == 0 && (tp % ep == 0 || ep % tp == 0)) eps.emplace_back(1, ep);
          }
        }
        for (SequenceParallel kind : kinds(tp, sp)) {
          for (const config::CpComm cp_comm : cp_comms(kind)) {
            for (int64_t chunk : fpdt_chunks(kind, s.model.seq_len)) {
              for (const ScheduleChoice& sc : schedules(pp, s.model.layers, kind)) {
                for (int64_t mb : micro_batches) {
                  for (const auto& [expert_tp, ep] : eps) {
                    PlanChoice c;
                    c.tp = tp;
                    c.pp = pp;
                    c.dp = dp;
                    c.sp = sp;
                    c.vpp = sc.vpp;
                    c.ep = ep;
                    c.expert_tp = expert_tp;
                    c.schedule = sc.schedule;
                    c.sequence_parallel = kind;
                    c.cp_comm = cp_comm;
                    c.fpdt_chunk_tokens = chunk;
                    c.micro_batch = mb;
                    c.zero_stage = s.parallelism.zero_stage;
                    c.recompute = s.parallelism.recompute;
                    if (pins.admits(c)) space.layouts.push_back(c);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return space;
}

}  // namespace trainsim::search
