#include "sim/validate/comm_study.h"

#include <algorithm>
#include <array>
#include <optional>

#include <fmt/format.h>

#include "sim/common/text_table.h"
#include "sim/config/diagnostics.h"
#include "sim/config/units.h"
#include "sim/workload/builder.h"
#include "sim/workload/errors.h"
#include "sim/workload/plan.h"

namespace trainsim::validate {
namespace {

using workload::CommKind;
using workload::CommLogEntry;

struct Scheme {
  const char* name;
  int zero_stage;
  enum Axis { kData, kTensor, kPipeline } axis;
};

constexpr std::array<Scheme, 6> kSchemes{{{"DP", 0, Scheme::kData},
                                          {"ZeRO-1", 1, Scheme::kData},
                                          {"ZeRO-2", 2, Scheme::kData},
                                          {"ZeRO-3", 3, Scheme::kData},
                                          {"TP", 0, Scheme::kTensor},
                                          {"PP", 0, Scheme::kPipeline}}};

// Upper edges of the message-size histogram's bins; the last bin is everything above.
constexpr std::array<double, 5> kBinEdges{4096.0, 65536.0, 1048576.0, 16777216.0, 268435456.0};
constexpr std::array<const char*, 6> kBinNames{"<=4KiB",  "<=64KiB",  "<=1MiB",
                                               "<=16MiB", "<=256MiB", ">256MiB"};

// The published ratio to DP (Anthony et al. 2024 abstract: ZeRO-3 moves about 1.5x the volume of
// DP, ZeRO-1 and ZeRO-2), where the paper gives one.
std::optional<double> published_ratio(const std::string& scheme) {
  if (scheme == "ZeRO-1" || scheme == "ZeRO-2") return 1.0;
  if (scheme == "ZeRO-3") return 1.5;
  return std::nullopt;
}

int64_t largest_common_divisor_up_to(int64_t a, int64_t b, int64_t limit) {
  for (int64_t d = std::min({a, b, limit}); d > 1; --d) {
    if (a % d == 0 && b % d == 0) return d;
  }
  return 1;
}

SchemeComm run_scheme(const ScenarioLoader& load, const config::Scenario& base, const Scheme& scheme,
                      int64_t seq_len) {
  const int64_t n = base.cluster.gpus;
  int64_t tp = 1, pp = 1;
  if (scheme.axis == Scheme::kTensor) {
    tp = largest_common_divisor_up_to(base.model.heads, n, base.cluster.topology.node.gpus);
  }
  if (scheme.axis == Scheme::kPipeline) pp = largest_common_divisor_up_to(base.model.layers, n, n);
  const int64_t dp = n / (tp * pp);
  SchemeComm out;
  out.scheme = scheme.name;
  out.seq_len = seq_len;
  out.plan = fmt::format("tp {} pp {} dp {}, ZeRO-{}", tp, pp, dp, scheme.zero_stage);
  YAML::Node extra(YAML::NodeType::Map);
  extra["parallelism"]["tp"] = tp;
  extra["parallelism"]["pp"] = pp;
  extra["parallelism"]["dp"] = dp;
  extra["parallelism"]["sp"] = 1;
  extra["parallelism"]["vpp"] = 1;
  extra["parallelism"]["schedule"] = "1f1b";
  extra["parallelism"]["sequence_parallel"] = "none";
  extra["parallelism"]["zero_stage"] = scheme.zero_stage;
  // Only what differs from the scenario is set, so that the scenario's own values stay visible.
  if (base.training.global_batch != base.training.micro_batch * n) {
    extra["training"]["global_batch"] = base.training.micro_batch * n;
  }
  if (seq_len != base.model.seq_len) extra["model"]["seq_len"] = seq_len;
  try {
    const config::Scenario s = load(extra);
    const workload::ParallelPlan plan = workload::make_plan(s);
    const std::vector<workload::Graph> graphs = workload::build_class_graphs(s, plan);
    out.log = workload::comm_log(plan, graphs.front());
    out.expected = analytic::expected_comm(s, 0);
  } catch (const config::ConfigError& e) {
    out.error = e.diagnostics().empty() ? e.what() : e.diagnostics().front().message;
  } catch (const workload::PlanError& e) {
    out.error = e.what();
  }
  for (const CommLogEntry& e : out.log) out.volume_bytes += e.volume_bytes;
  for (const analytic::ExpectedComm& e : out.expected) out.expected_volume_bytes += e.volume_bytes;
  return out;
}

size_t bin_of(double bytes) {
  size_t bin = 0;
  while (bin < kBinEdges.size() && bytes > kBinEdges[bin]) ++bin;
  return bin;
}

struct SmallShares {
  double calls = 0;                 // share of calls below kSmallMessageBytes
  double volume = 0;                // share of volume
  std::optional<double> p2p_calls;  // share of send/receive calls; none without point-to-point
};

SmallShares small_shares(const std::vector<CommLogEntry>& log) {
  double calls = 0, small_calls = 0, volume = 0, small_volume = 0, p2p = 0, small_p2p = 0;
  for (const CommLogEntry& e : log) {
    const bool small = e.bytes_per_call < kSmallMessageBytes;
    const bool point_to_point = e.kind == CommKind::kSend || e.kind == CommKind::kRecv;
    calls += static_cast<double>(e.calls);
    volume += e.volume_bytes;
    if (point_to_point) p2p += static_cast<double>(e.calls);
    if (!small) continue;
    small_calls += static_cast<double>(e.calls);
    small_volume += e.volume_bytes;
    if (point_to_point) small_p2p += static_cast<double>(e.calls);
  }
  SmallShares out;
  out.calls = calls > 0 ? small_calls / calls : 0;
  out.volume = volume > 0 ? small_volume / volume : 0;
  if (p2p > 0) out.p2p_calls = small_p2p / p2p;
  return out;
}

// The log and the closed form of one scheme summed per collective kind and group.
struct KindGroup {
  CommKind kind;
  workload::GroupKind group;
  int64_t calls = 0;
  double smallest_bytes = 0;
  double largest_bytes = 0;
  double volume_bytes = 0;
  double expected_volume_bytes = 0;
};

std::vector<KindGroup> by_kind_group(const SchemeComm& s) {
  std::vector<KindGroup> rows;
  const auto row = [&](CommKind kind, workload::GroupKind group) -> KindGroup& {
    for (KindGroup& r : rows) {
      if (r.kind == kind && r.group == group) return r;
    }
    rows.push_back({kind, group});
    return rows.back();
  };
  for (const CommLogEntry& e : s.log) {
    KindGroup& r = row(e.kind, e.group);
    r.smallest_bytes = r.calls == 0 ? e.bytes_per_call : std::min(r.smallest_bytes, e.bytes_per_call);
    r.largest_bytes = std::max(r.largest_bytes, e.bytes_per_call);
    r.calls += e.calls;
    r.volume_bytes += e.volume_bytes;
  }
  for (const analytic::ExpectedComm& e : s.expected)
    row(e.kind, e.group).expected_volume_bytes += e.volume_bytes;
  return rows;
}

const SchemeComm* find(const std::vector<SchemeComm>& schemes, const std::string& name) {
  for (const SchemeComm& s : schemes) {
    if (s.scheme == name && s.error.empty()) return &s;
  }
  return nullptr;
}

}  // namespace

double rank_volume_bytes(const config::Scenario& scenario) {
  const workload::ParallelPlan plan = workload::make_plan(scenario);
  const workload::Graph graph = workload::build_rank_graph(scenario, plan, 0);
  double volume = 0;
  for (const CommLogEntry& e : workload::comm_log(plan, graph)) volume += e.volume_bytes;
  return volume;
}

CommStudy study_comm(const ScenarioLoader& load) {
  const config::Scenario base = load(YAML::Node());
  CommStudy study;
  study.scenario = base.name;
  study.gpus = base.cluster.gpus;
  study.gpus_per_node = base.cluster.topology.node.gpus;
  study.micro_batch = base.training.micro_batch;
  study.global_batch = base.training.micro_batch * base.cluster.gpus;
  study.seq_len = base.model.seq_len;
  for (const Scheme& scheme : kSchemes)
    study.schemes.push_back(run_scheme(load, base, scheme, study.seq_len));
  for (int64_t factor_log2 = -2; factor_log2 <= 2; ++factor_log2) {
    const int64_t s = factor_log2 < 0 ? study.seq_len >> -factor_log2 : study.seq_len << factor_log2;
    if (s > 0 && (factor_log2 >= 0 || s << -factor_log2 == study.seq_len)) study.sweep_seq_lens.push_back(s);
  }
  for (size_t k = 0; k < kSchemes.size(); ++k) {
    for (int64_t s : study.sweep_seq_lens) {
      study.sweep.push_back(s == study.seq_len ? study.schemes[k] : run_scheme(load, base, kSchemes[k], s));
    }
  }
  return study;
}

nlohmann::json to_json(const CommStudy& study) {
  const SchemeComm* dp = find(study.schemes, "DP");
  nlohmann::json schemes = nlohmann::json::array();
  for (const SchemeComm& s : study.schemes) {
    nlohmann::json j{{"scheme", s.scheme}, {"plan", s.plan}, {"seq_len", s.seq_len}};
    if (!s.error.empty()) {
      j["error"] = s.error;
      schemes.push_back(j);
      continue;
    }
    j["volume_bytes"] = s.volume_bytes;
    j["closed_form_volume_bytes"] = s.expected_volume_bytes;
    if (dp != nullptr) {
      j["ratio_to_dp"] = s.volume_bytes / dp->volume_bytes;
      j["closed_form_ratio_to_dp"] = s.expected_volume_bytes / dp->expected_volume_bytes;
    }
    if (const auto published = published_ratio(s.scheme)) j["published_ratio_to_dp"] = *published;
    nlohmann::json log = nlohmann::json::array();
    for (const CommLogEntry& e : s.log) {
      log.push_back({{"kind", workload::to_string(e.kind)},
                     {"group", workload::to_string(e.group)},
                     {"group_size", e.group_size},
                     {"calls", e.calls},
                     {"bytes_per_call", e.bytes_per_call},
                     {"volume_bytes", e.volume_bytes}});
    }
    j["log"] = log;
    nlohmann::json expected = nlohmann::json::array();
    for (const analytic::ExpectedComm& e : s.expected) {
      expected.push_back({{"kind", workload::to_string(e.kind)},
                          {"group", workload::to_string(e.group)},
                          {"calls", e.calls},
                          {"bytes_per_call", e.bytes_per_call},
                          {"volume_bytes", e.volume_bytes},
                          {"formula", e.source}});
    }
    j["closed_form"] = expected;
    nlohmann::json histogram = nlohmann::json::object();
    for (const CommLogEntry& e : s.log) {
      nlohmann::json& bins = histogram[std::string(workload::to_string(e.kind))];
      if (bins.is_null()) bins = nlohmann::json(std::vector<int64_t>(kBinNames.size(), 0));
      bins[bin_of(e.bytes_per_call)] = bins[bin_of(e.bytes_per_call)].get<int64_t>() + e.calls;
    }
    j["histogram"] = {{"bins", kBinNames}, {"calls", histogram}};
    const SmallShares small = small_shares(s.log);
    j["small_messages"] = {{"threshold_bytes", kSmallMessageBytes},
                           {"calls_share", small.calls},
                           {"volume_share", small.volume}};
    if (small.p2p_calls) j["small_messages"]["p2p_calls_share"] = *small.p2p_calls;
    schemes.push_back(j);
  }
  nlohmann::json sweep = nlohmann::json::array();
  for (const SchemeComm& s : study.sweep) {
    nlohmann::json j{{"scheme", s.scheme}, {"seq_len", s.seq_len}};
    if (!s.error.empty()) {
      j["error"] = s.error;
    } else {
      j["volume_bytes"] = s.volume_bytes;
      j["closed_form_volume_bytes"] = s.expected_volume_bytes;
      const SmallShares small = small_shares(s.log);
      j["small_calls_share"] = small.calls;
      if (small.p2p_calls) j["small_p2p_calls_share"] = *small.p2p_calls;
    }
    sweep.push_back(j);
  }
  return {{"scenario", study.scenario},
          {"gpus", study.gpus},
          {"gpus_per_node", study.gpus_per_node},
          {"global_batch", study.global_batch},
          {"micro_batch", study.micro_batch},
          {"seq_len", study.seq_len},
          {"schemes", schemes},
          {"sweep", sweep}};
}

std::string render_table(const CommStudy& study) {
  std::string out = fmt::format(
      "# trainsim analyze --comm: {} ({} GPUs, {} per node; global batch {}, micro-batch {}, "
      "sequence {})\n# communication per rank and iteration, rank 0 (Anthony et al. 2024); volume: "
      "all-reduce 2m, all-gather m, reduce-scatter m, all-to-all m, send m\n\n",
      study.scenario, study.gpus, study.gpus_per_node, study.global_batch, study.micro_batch, study.seq_len);
  const SchemeComm* dp = find(study.schemes, "DP");
  using Align = TextTable::Align;
  TextTable schemes({{"# scheme", Align::kLeft, 8},
                     {"plan", Align::kLeft, 24},
                     {"graph volume", Align::kRight, 14},
                     {"closed form", Align::kRight, 14},
                     {"diff", Align::kRight, 8},
                     {"vs DP", Align::kRight, 9},
                     {"closed", Align::kRight, 9},
                     {"published", Align::kRight, 10}});
  for (const SchemeComm& s : study.schemes) {
    if (!s.error.empty()) {
      schemes.add_line(fmt::format("{:<8} {:<24} cannot be expressed: {}", s.scheme, s.plan, s.error));
      continue;
    }
    const auto published = published_ratio(s.scheme);
    schemes.add_row(
        {s.scheme, s.plan, config::format_bytes_rounded(s.volume_bytes),
         config::format_bytes_rounded(s.expected_volume_bytes),
         fmt::format("{:.2f}%", s.expected_volume_bytes > 0
                                    ? 100 * (s.volume_bytes / s.expected_volume_bytes - 1)
                                    : 0.0),
         dp != nullptr ? fmt::format("{:.3f}", s.volume_bytes / dp->volume_bytes) : "-",
         dp != nullptr ? fmt::format("{:.3f}", s.expected_volume_bytes / dp->expected_volume_bytes) : "-",
         published ? fmt::format("~{:.1f}", *published) : "-"});
  }
  out += schemes.render();

  TextTable kinds({{"# scheme", Align::kLeft, 8},
                   {"kind", Align::kLeft, 15},
                   {"group", Align::kLeft, 9},
                   {"calls", Align::kRight, 9},
                   {"bytes/call", Align::kRight, 23},
                   {"volume", Align::kRight, 14},
                   {"closed form", Align::kRight, 14}});
  for (const SchemeComm& s : study.schemes) {
    if (!s.error.empty()) continue;
    for (const KindGroup& row : by_kind_group(s)) {
      const std::string sizes = row.smallest_bytes == row.largest_bytes
                                    ? config::format_bytes_rounded(row.largest_bytes)
                                    : fmt::format("{}..{}", config::format_bytes_rounded(row.smallest_bytes),
                                                  config::format_bytes_rounded(row.largest_bytes));
      kinds.add_row({s.scheme, std::string(workload::to_string(row.kind)),
                     std::string(workload::to_string(row.group)), std::to_string(row.calls), sizes,
                     config::format_bytes_rounded(row.volume_bytes),
                     config::format_bytes_rounded(row.expected_volume_bytes)});
    }
  }
  out += "\n" + kinds.render();

  out += "\n# message-size histogram: calls per size bin (rank 0)\n";
  TextTable histogram({{"# scheme", Align::kLeft, 8}, {"kind", Align::kLeft, 15}});
  for (const char* bin : kBinNames) histogram.add_column({bin, Align::kRight, 9});
  for (const SchemeComm& s : study.schemes) {
    if (!s.error.empty()) continue;
    std::vector<std::pair<CommKind, std::array<int64_t, kBinNames.size()>>> rows;
    for (const CommLogEntry& e : s.log) {
      if (rows.empty() || rows.back().first != e.kind) rows.push_back({e.kind, {}});
      rows.back().second[bin_of(e.bytes_per_call)] += e.calls;
    }
    for (const auto& [kind, bins] : rows) {
      std::vector<std::string> row = {s.scheme, std::string(workload::to_string(kind))};
      for (int64_t calls : bins) row.push_back(std::to_string(calls));
      histogram.add_row(std::move(row));
    }
  }
  out += histogram.render();

  // One row per scheme, one column per swept sequence length, each cell `cell(s)` ("n/a" when the plan
  // cannot be expressed at that length).
  const size_t lengths = study.sweep_seq_lens.size();
  const auto by_length = [&](const auto& cell) {
    TextTable table({{"# scheme", Align::kLeft, 8}});
    for (int64_t seq : study.sweep_seq_lens)
      table.add_column({fmt::format("seq {}", seq), Align::kRight, 26});
    for (size_t i = 0; i < study.sweep.size(); i += lengths) {
      std::vector<std::string> row = {study.sweep[i].scheme};
      for (size_t k = 0; k < lengths; ++k) {
        const SchemeComm& s = study.sweep[i + k];
        row.push_back(s.error.empty() ? cell(s) : std::string("n/a"));
      }
      table.add_row(std::move(row));
    }
    return table.render();
  };
  out += "\n# volume per rank against sequence length (graph; closed form in brackets)\n";
  out += by_length([](const SchemeComm& s) {
    return fmt::format("{} ({})", config::format_bytes_rounded(s.volume_bytes),
                       config::format_bytes_rounded(s.expected_volume_bytes));
  });
  out += fmt::format("\n# small messages (< {}): share of calls, of volume, of point-to-point calls\n",
                     config::format_bytes_rounded(kSmallMessageBytes));
  out += by_length([](const SchemeComm& s) {
    const SmallShares small = small_shares(s.log);
    return fmt::format("{:.1f}% {:.3f}% {}", 100 * small.calls, 100 * small.volume,
                       small.p2p_calls ? fmt::format("{:.0f}%", 100 * *small.p2p_calls) : std::string("-"));
  });
  return out;
}

}  // namespace trainsim::validate
