// Decoding of a scenario's `campaign` section.
#include <fmt/format.h>

#include "sim/config/decode.h"

namespace trainsim::config::internal {
namespace {

void decode_checkpoints(const Node& node, Checkpoints& out) {
  MapReader m(node);
  m.require("write_bandwidth", out.write_bandwidth_bytes_per_s, QuantityKind::kBandwidth, kPositiveReal);
  m.read("async", out.async);
  const Node interval = m.child("interval");
  if (interval.defined() && interval.scalar() != "auto") {
    std::string error;
    const std::optional<double> seconds = parse_quantity(interval.scalar(), QuantityKind::kDuration, &error);
    if (!seconds) {
      interval.error(error + "; or auto (the optimum for the interruptions)");
    } else if (*seconds <= 0) {
      interval.error(fmt::format("must be above 0, got {}", interval.scalar()));
    } else {
      out.interval_s = *seconds;
    }
  }
  m.finish();
}

void decode_interruptions(const Node& node, Interruptions& out) {
  MapReader m(node);
  m.require("mtbi_per_gpu", out.mtbi_per_gpu_s, QuantityKind::kDuration, kPositiveReal);
  m.require("restart", out.restart_s, QuantityKind::kDuration);
  m.finish();
}

}  // namespace

void decode_campaign(MapReader& m, Campaign& out) {
  const Node tokens = m.child("tokens");
  if (!tokens.defined()) {
    m.missing("tokens");
  } else {
    std::string error;
    if (const std::optional<double> value = parse_token_total(tokens.scalar(), &error)) {
      out.tokens = *value;
    } else {
      tokens.error(error);
    }
  }
  const Node checkpoints = m.child("checkpoints");
  if (checkpoints.defined()) decode_checkpoints(checkpoints, out.checkpoints.emplace());
  const Node interruptions = m.child("interruptions");
  if (interruptions.defined()) decode_interruptions(interruptions, out.interruptions.emplace());
  m.finish();

  if (out.interruptions && !out.checkpoints) {
    interruptions.error(
        "interruptions need checkpoints: without them every interruption restarts the run from its first "
        "iteration; add checkpoints: {write_bandwidth: ...}");
  }
  if (out.checkpoints && out.checkpoints->interval_s == 0 && !out.interruptions) {
    checkpoints.error(
        "the checkpoint interval is auto, the optimum against interruptions, but the campaign has none; add "
        "interruptions: {mtbi_per_gpu: ..., restart: ...} or a fixed interval (e.g. interval: 1h)");
  }
}

}  // namespace trainsim::config::internal
