// A validation case: one published measurement (a time, a throughput, a maximum sequence length, a
// communication-volume ratio), the scenario that reproduces its setup, and everything needed to
// judge the simulated value against it. Suites group cases, carry the CI gate thresholds and the
// shape checks (facts about several cases together, such as "MFU rises with sequence length").
// The file format is documented in scenarios/validation/README.md.
#ifndef TRAINSIM_SIM_VALIDATE_CASE_H_
#define TRAINSIM_SIM_VALIDATE_CASE_H_

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/config/diagnostics.h"
#include "sim/config/node.h"
#include "sim/config/types.h"

namespace trainsim::validate {

// What a case measures, with its unit in the name. See metrics.h for how each is extracted.
enum class Metric {
  kIterationTime,             // iteration_time_s: one training iteration, seconds
  kTokensPerGpu,              // tokens_per_s_per_gpu: tokens trained per second per GPU
  kTflopsPerGpu,              // tflops_per_gpu: model FLOPs per GPU per second (Korthikanti), TFLOP/s
  kHardwareTflopsPerGpu,      // hardware_tflops_per_gpu: with recomputation counted (Narayanan Table 1)
  kMfu,                       // mfu: model FLOPs utilisation, fraction of the dense peak
  kHfu,                       // hfu: hardware FLOPs utilisation, fraction
  kExecutedFlopsUtilization,  // executed_flops_utilization: FLOPs the kernels run (causal skipped) / peak
  kMegatronDeepspeedMfu,      // megatron_deepspeed_mfu: Megatron-DeepSpeed's throughput_calculator / peak
  kMegatronDeepspeedTflops,   // megatron_deepspeed_tflops_per_gpu: the same calculator, TFLOP/s per GPU
  kLayerForward,              // layer_forward_s: one transformer layer's forward pass, seconds
  kLayerBackward,             // layer_backward_s: its backward pass (with its recomputation), seconds
  kMaxSequenceTokens,         // max_sequence_tokens: longest sequence whose plan fits in memory, tokens
  kCommVolumeRatio,           // comm_volume_ratio: per-rank communication volume, scenario / baseline
};

// How the simulated value is held against the published one.
enum class Comparison {
  kEqual,    // a measured value: pass when within the tolerance either way
  kAtLeast,  // a claimed lower bound ("> 55 % MFU"): pass when at least published - tolerance
  kAtMost,   // a claimed upper bound
};

// How sure the transcription of the published number is: the marks of the reference notes. P, S2,
// S1, D, R as in ground-truth.md; fig, abs, doc, code as in seed-papers.md; unconfirmed cases are
// reported but never gated and never enter a suite's error statistics.
enum class Confidence { kP, kS2, kS1, kD, kR, kFig, kAbs, kDoc, kCode, kUnconfirmed };

enum class Network { kSimgrid, kIdeal };

// What a case is for (docs/DESIGN.md decision 8): a calibration case may be fitted on (a stack profile's
// parameters come from such cases) and is reported with its residual, never in a suite's statistics;
// a validation case is predicted, never fitted on, and is what the statistics and the gate count.
// A case declares it (`role`), or it follows from the case: a timed metric on one node of its
// topology is calibration, everything else validation (role_of, metrics.h).
enum class Role { kCalibration, kValidation };

enum class ShapeKind {
  kRising,        // the metric strictly rises along the listed cases
  kBelow,         // the first case is below the second by a gap within [min_gap, max_gap]
  kRatioAtLeast,  // first / second >= ratio
};

struct Tolerance {
  bool relative = true;  // relative: |simulated - published| / published; otherwise absolute
  double value = 0;      // a fraction when relative, the metric's unit otherwise
};

// One entry of the `assumptions` map: a setting the paper leaves open, the choice and its reason.
struct Assumption {
  std::string key;
  std::string text;
};

// The scenario of a case: an ordinary scenario file plus a partial scenario merged on top of it
// (`set`, maps merge and lists replace, as with `--set`).
struct ScenarioRef {
  std::filesystem::path file;      // absolute
  std::vector<config::Layer> set;  // the `set` maps, highest priority first (case, then its bases)
  config::Location location;       // of the `scenario` (or `baseline`) key, for errors
};

// The sequence lengths tried for max_sequence_tokens: from, 2 from, 4 from, ... up to `to`.
struct SequenceSearch {
  int64_t from_tokens = 0;
  int64_t to_tokens = 0;
};

struct Case {
  std::filesystem::path file;  // absolute
  std::string display_file;    // as shown in messages
  std::string id;
  std::string suite;
  std::string paper;  // source.paper
  std::string where;  // source.where: table or figure, row and column
  Confidence confidence = Confidence::kUnconfirmed;
  Metric metric = Metric::kIterationTime;
  Comparison comparison = Comparison::kEqual;
  double published = 0;
  Tolerance tolerance;
  std::optional<double> calculon;  // Calculon's number for the same case, where published
  Network network = Network::kSimgrid;
  std::optional<Role> role;             // declared; absent: from the case (role_of)
  std::vector<Assumption> assumptions;  // in file order
  ScenarioRef scenario;
  std::optional<ScenarioRef> baseline;   // comm_volume_ratio only: the denominator's scenario
  std::optional<SequenceSearch> search;  // max_sequence_tokens only
};

struct Gate {
  double median_abs_error = 0;  // fractions
  // Every case's bound; absent: the suite's median alone is gated (a suite with a case whose
  // mechanism is known to be missing says so beside its gate).
  std::optional<double> max_abs_error;
};

struct ShapeCheck {
  ShapeKind kind = ShapeKind::kRising;
  std::string name;                // what the check states
  std::string source;              // where the published data supports it
  std::vector<std::string> cases;  // case ids
  double min_gap = 0;              // kBelow, in the metric's unit
  double max_gap = 0;
  double ratio = 0;  // kRatioAtLeast
};

struct Suite {
  std::filesystem::path file;
  std::string name;
  std::string description;
  std::optional<Gate> gate;
  std::vector<ShapeCheck> shape_checks;
};

struct ValidationSet {
  std::vector<Case> cases;    // sorted by suite, then id
  std::vector<Suite> suites;  // sorted by name; a suite named by cases but without a file has defaults
};

// Reads every case and suite under `root` (a folder, searched recursively; or one case file, with the
// suite.yaml beside it but without its shape checks): files named suite.yaml define suites, folders
// named `base` hold shared files (scenarios and case bases reached through `extends`), every other
// .yaml file is a case. Checks the whole set (unique ids,
// shape checks naming existing cases of their suite, fields the metric needs) and throws
// config::ConfigError carrying every problem, located. Scenarios are not loaded here.
ValidationSet load_validation_set(const std::filesystem::path& root);

// The spelling of a metric in case files and reports, and its unit for tables ("s", "TFLOP/s", "",
// "tokens").
std::string_view to_string(Metric metric);
std::string_view unit_of(Metric metric);
// A value of `metric` as tables show it: "1.234 s", "12.50 ms", "45.2%", "312.4 TF/s", "2Mi".
std::string format_value(Metric metric, double value);
std::string_view to_string(Comparison comparison);
std::string_view to_string(Confidence confidence);
std::string_view to_string(Network network);
std::string_view to_string(Role role);
std::string_view to_string(ShapeKind kind);

}  // namespace trainsim::validate

namespace trainsim::config {

// Spellings of the validation enumerations in case and suite files (decoded like every enumeration).
template <>
struct EnumNames<validate::Metric> {
  using M = validate::Metric;
  static constexpr auto kNames = std::to_array<std::pair<M, std::string_view>>(
      {{M::kIterationTime, "iteration_time_s"},
       {M::kTokensPerGpu, "tokens_per_s_per_gpu"},
       {M::kTflopsPerGpu, "tflops_per_gpu"},
       {M::kHardwareTflopsPerGpu, "hardware_tflops_per_gpu"},
       {M::kMfu, "mfu"},
       {M::kHfu, "hfu"},
       {M::kExecutedFlopsUtilization, "executed_flops_utilization"},
       {M::kMegatronDeepspeedMfu, "megatron_deepspeed_mfu"},
       {M::kMegatronDeepspeedTflops, "megatron_deepspeed_tflops_per_gpu"},
       {M::kLayerForward, "layer_forward_s"},
       {M::kLayerBackward, "layer_backward_s"},
       {M::kMaxSequenceTokens, "max_sequence_tokens"},
       {M::kCommVolumeRatio, "comm_volume_ratio"}});
};

template <>
struct EnumNames<validate::Comparison> {
  using C = validate::Comparison;
  static constexpr auto kNames = std::to_array<std::pair<C, std::string_view>>(
      {{C::kEqual, "equal"}, {C::kAtLeast, "at_least"}, {C::kAtMost, "at_most"}});
};

template <>
struct EnumNames<validate::Confidence> {
  using C = validate::Confidence;
  static constexpr auto kNames =
      std::to_array<std::pair<C, std::string_view>>({{C::kP, "P"},
                                                     {C::kS2, "S2"},
                                                     {C::kS1, "S1"},
                                                     {C::kD, "D"},
                                                     {C::kR, "R"},
                                                     {C::kFig, "fig"},
                                                     {C::kAbs, "abs"},
                                                     {C::kDoc, "doc"},
                                                     {C::kCode, "code"},
                                                     {C::kUnconfirmed, "unconfirmed"}});
};

template <>
struct EnumNames<validate::Network> {
  using N = validate::Network;
  static constexpr auto kNames =
      std::to_array<std::pair<N, std::string_view>>({{N::kSimgrid, "simgrid"}, {N::kIdeal, "ideal"}});
};

template <>
struct EnumNames<validate::Role> {
  using R = validate::Role;
  static constexpr auto kNames = std::to_array<std::pair<R, std::string_view>>(
      {{R::kCalibration, "calibration"}, {R::kValidation, "validation"}});
};

template <>
struct EnumNames<validate::ShapeKind> {
  using K = validate::ShapeKind;
  static constexpr auto kNames = std::to_array<std::pair<K, std::string_view>>(
      {{K::kRising, "rising"}, {K::kBelow, "below"}, {K::kRatioAtLeast, "ratio_at_least"}});
};

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_VALIDATE_CASE_H_
