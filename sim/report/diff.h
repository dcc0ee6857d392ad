// What differs between two runs: the inputs (two scenarios, every value the simulator uses, framework
// defaults included; or what two run reports record of theirs) and every metric that moved, the
// breakdown, memory, power, the communication log and each pipeline stage included; and the same
// for two cluster reports, job by job, for two validation reports, case by case, and for two sweeps'
// results, point by point. `trainsim diff`
// prints it as a table or JSON.
#ifndef TRAINSIM_SIM_REPORT_DIFF_H_
#define TRAINSIM_SIM_REPORT_DIFF_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"

namespace trainsim::report {

// One dotted key whose value differs; an empty side is a key the other side lacks.
struct InputDifference {
  std::string key;
  std::string a, b;
};

// Every key of the two scenarios' fully resolved YAML (config::to_yaml with the framework defaults
// written out) that differs, in the YAML's order; the topology and hardware files compare by their
// resolved paths, shown relative to `shown_from`.
std::vector<InputDifference> scenario_differences(const config::Scenario& a, const config::Scenario& b,
                                                  const std::string& shown_from);

// The inputs two run reports record (scenario name, plan, dtype, attention kernel, the input files'
// names and hashes, the run's options) that differ.
std::vector<InputDifference> report_input_differences(const nlohmann::json& a, const nlohmann::json& b);

// One metric of two run reports. Numbers carry both values; a flag or a name that changed (memory
// fits, the critical rank's stage...) carries text only.
struct MetricChange {
  std::string key;  // dotted: "iteration_time_s", "breakdown.bubble_s", "comm.all_gather.dp.time_s"
  std::optional<double> a, b;
  std::string a_text, b_text;
};

// Every metric of report `b` that differs from `a` by more than `relative_tolerance` of the larger
// magnitude (or appears on one side only): the headline numbers, then breakdown, memory, power,
// communication (summed per collective kind and group) and pipeline stages; provenance, simulation
// counters, the "why" section (derived from those) and the "accuracy" evidence (the validation's, not
// the run's) are not metrics. Warnings that appear or disappear are listed under "warnings".
std::vector<MetricChange> metric_changes(const nlohmann::json& a, const nlohmann::json& b,
                                         double relative_tolerance = 1e-9);

// Whether `report` is what `trainsim cluster --format json` writes: the cluster's jobs, each with its
// run report alone and shared.
bool is_cluster_report(const nlohmann::json& report);

// The inputs two cluster reports record that differ: the cluster file, topology, nodes, placement and
// options, then job by job (keys "jobs.NAME.", jobs matched by name) its scenario file, GPUs, nodes,
// start and what its run reports record of their inputs ("jobs.NAME.report.").
std::vector<InputDifference> cluster_input_differences(const nlohmann::json& a, const nlohmann::json& b);

// Every metric of two cluster reports that moved, as metric_changes judges them: the cluster's window,
// then job by job its slowdown, whether it fits, its slowed collectives and the metrics of its run
// alone and shared (keys "jobs.NAME.alone.iteration_time_s", "jobs.NAME.shared.breakdown.idle_s"...),
// and the warnings that appear or disappear.
std::vector<MetricChange> cluster_metric_changes(const nlohmann::json& a, const nlohmann::json& b,
                                                 double relative_tolerance = 1e-9);

// Whether `report` is what `trainsim validate --format json` writes: cases, suite statistics, gate.
bool is_validation_report(const nlohmann::json& report);

// The inputs two validation reports record that differ, case by case (keys "cases.ID.", cases matched
// by id): the published value and its metric, the case's role, file, stack and hardware profile, GPUs
// and tolerance; and the gate's thresholds. A case only one side has is a set of differences.
std::vector<InputDifference> validation_input_differences(const nlohmann::json& a, const nlohmann::json& b);

// Every metric of two validation reports that moved, as metric_changes judges them: case by case its
// simulated value, error, pass, hardware-only run and breakdown ("cases.ID.relative_error"...), then
// each suite's statistics ("summary.SUITE.median_abs_error"), the error by GPU count, the shape
// checks, the accuracy table's regimes ("accuracy.megatron-lm.NVIDIA A100-SXM4-80GB.513+.validation.
// median_abs_error") and whether the gate holds.
std::vector<MetricChange> validation_metric_changes(const nlohmann::json& a, const nlohmann::json& b,
                                                    double relative_tolerance = 1e-9);

// Whether `results` is a sweep's results: the points of `trainsim sweep`'s results.jsonl as one array,
// each with its "point" (index, id, axis values) and "status".
bool is_sweep_results(const nlohmann::json& results);

// The inputs two sweeps' results record that differ, point by point (keys "points.AXIS=VALUE,...."
// with the point's axis values, points matched by them): how the point was evaluated (simulated or
// closed form) and what its report records of its inputs. A point only one side has is a set of
// differences.
std::vector<InputDifference> sweep_input_differences(const nlohmann::json& a, const nlohmann::json& b);

// Every metric of two sweeps' results that moved, as metric_changes judges them, point by point
// ("points.ep=8,capacity=1.25.iteration_time_s"): its status (ok, infeasible, failed) and why, and
// its report's metrics; and the warnings that appear or disappear.
std::vector<MetricChange> sweep_metric_changes(const nlohmann::json& a, const nlohmann::json& b,
                                               double relative_tolerance = 1e-9);

// The diff as one JSON object: {"a": label, "b": label, "inputs": [...], "metrics": [...]} with each
// metric's absolute and relative change.
nlohmann::json diff_json(const std::string& label_a, const std::string& label_b,
                         const std::vector<InputDifference>& inputs,
                         const std::vector<MetricChange>& metrics);

// The same as a table: the differing inputs, then the metrics with A, B, B - A and the change in %.
std::string render_diff_table(const nlohmann::json& diff);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_DIFF_H_
