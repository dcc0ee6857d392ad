#include "calibrate/harness.h"

#include <stdexcept>

#include <fmt/format.h>

#include "calibrate/cpu/host_timer.h"

namespace trainsim::calibrate {
namespace {

// Times each case with `time_one`; refused cases become notes.
template <class Case, class F>
void sweep(const std::vector<Case>& cases, Progress& progress, Measurements& out,
           std::vector<Measured<Case>>& results, const F& time_one) {
  for (const Case& c : cases) {
    progress.step(describe(c));
    try {
      results.push_back({c, summarize(time_one(c))});
    } catch (const std::invalid_argument& e) {
      out.notes.push_back(fmt::format("{} left out: {}", describe(c), e.what()));
    }
  }
}

}  // namespace

Measurements run_calibration(Backend& backend, const CalibrationPlan& plan, Progress& progress) {
  const double start = cpu::now_s();
  Measurements out;
  out.facts = backend.facts();
  out.compute_policy = plan.compute_policy;
  out.collective_policy = plan.collective_policy;
  out.copy_policy = plan.copy_policy;
  out.notes = plan.notes;
  progress.start(plan.item_count());

  progress.step("launch and host-sync overheads");
  const OverheadSamples overheads = backend.time_overheads(plan.compute_policy);
  out.launch = summarize(overheads.launch_s);
  out.host_sync = summarize(overheads.host_sync_s);
  if (!overheads.pipeline_sync_s.empty()) out.pipeline_sync = summarize(overheads.pipeline_sync_s);

  sweep(plan.gemms, progress, out, out.gemms,
        [&](const GemmCase& c) { return backend.time_gemm(c, plan.compute_policy); });
  sweep(plan.attentions, progress, out, out.attentions,
        [&](const AttentionCase& c) { return backend.time_attention(c, plan.compute_policy); });
  for (const double bytes : plan.device_copy_bytes) {
    progress.step(fmt::format("device copy {:.0f} B", bytes));
    out.device_copies.push_back({bytes, summarize(backend.time_device_copy(bytes, plan.copy_policy))});
  }
  sweep(plan.copies, progress, out, out.copies,
        [&](const CopyCase& c) { return backend.time_copy(c, plan.copy_policy); });
  sweep(plan.collectives, progress, out, out.collectives,
        [&](const CollectiveCase& c) { return backend.time_collective(c, plan.collective_policy); });

  progress.step("interference: " + describe(plan.interference_gemm) + " during " +
                describe(plan.interference_collective));
  const InterferenceSamples interference =
      backend.time_interference(plan.interference_gemm, plan.interference_collective, plan.compute_policy);
  out.interference_gemm = plan.interference_gemm;
  out.interference_collective = plan.interference_collective;
  out.interference_alone = summarize(interference.alone_s);
  out.interference_concurrent = summarize(interference.concurrent_s);
  if (!interference.overlapped) {
    out.notes.push_back(
        "interference: the collective finished before the GEMMs did, so the measured slowdown is a "
        "lower bound");
  }
  progress.step("power: idle, " + describe(plan.power_gemm) +
                fmt::format(", device copy {:.0f} B", plan.power_copy_bytes));
  out.power_gemm = plan.power_gemm;
  out.power_copy_bytes = plan.power_copy_bytes;
  out.power_hold_s = plan.power_hold_s;
  try {
    out.power = backend.measure_power(plan.power_gemm, plan.power_copy_bytes, plan.power_hold_s);
  } catch (const std::invalid_argument& e) {
    out.notes.push_back(fmt::format("power not measured: {}", e.what()));
  }
  progress.finish();
  out.wall_s = cpu::now_s() - start;
  return out;
}

}  // namespace trainsim::calibrate
