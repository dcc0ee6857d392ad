// Decoding of a stack profile's `stack` section (config/stack.h) and the rule that a stack profile
// only adds to the hardware profile it extends.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "sim/config/decode.h"

namespace trainsim::config::internal {
namespace {

// The keys a stack profile file may set itself; everything else belongs to the hardware profile.
constexpr std::array<std::string_view, 5> kStackFileKeys = {"schema_version", "extends", "name", "stack",
                                                            "sources"};

void decode_parameter(const Node& value, const StackParameterInfo& info, double& out) {
  const RealRange bounds{info.lower, info.upper};
  if (info.duration) {
    decode(value, out, QuantityKind::kDuration, bounds);
  } else {
    decode(value, out, bounds);
  }
}

void decode_parameters(MapReader& m, StackParameters& out) {
  for (const StackParameterInfo& info : stack_parameter_table()) {
    if (const Node value = m.child(info.name); value.defined()) decode_parameter(value, info, out[info.id]);
  }
  m.finish();
}

// A map from parameter names to plain numbers (uncertainty, sensitivity).
void decode_per_parameter(MapReader& m, std::map<StackParameter, double>& out) {
  for (const StackParameterInfo& info : stack_parameter_table()) {
    double value = 0;
    if (m.read(info.name, value, RealRange{0, std::numeric_limits<double>::infinity()})) out[info.id] = value;
  }
  m.finish();
}

void decode_fit(MapReader& m, StackFit& out) {
  m.require("command", out.command);
  m.read("tool_version", out.tool_version);
  const Node parameters = m.child("parameters");
  if (!parameters.defined()) {
    m.missing("parameters");
  } else if (!parameters.is_sequence()) {
    parameters.error("expected the list of fitted parameters, e.g. [gemm_fraction, memory_fraction]");
  } else {
    for (const Node& element : parameters.elements()) {
      std::string name;
      if (!decode(element, name)) continue;
      if (const std::optional<StackParameter> p = parse_stack_parameter(name)) {
        out.parameters.push_back(*p);
        continue;
      }
      std::vector<std::string> names;
      for (const StackParameterInfo& info : stack_parameter_table()) names.emplace_back(info.name);
      element.error(unknown_choice_message(name, names));
    }
  }
  m.read("inputs", out.inputs, "the list of case files or folders the fit read, relative to this file");
  if (const Node traces = m.child("traces"); traces.defined()) {
    if (!traces.is_sequence()) {
      traces.error("expected a list of {scenario, trace}: profiled runs the fit read, relative to this file");
    } else {
      for (const Node& element : traces.elements()) {
        MapReader r(element);
        std::pair<std::string, std::string>& t = out.traces.emplace_back();
        r.require("scenario", t.first);
        r.require("trace", t.second);
        r.finish();
      }
    }
  }
  m.read("rms_residual", out.rms_residual, RealRange{0, std::numeric_limits<double>::infinity()});
  MapReader uncertainty(m.child("uncertainty"));
  decode_per_parameter(uncertainty, out.uncertainty);
  MapReader sensitivity(m.child("sensitivity"));
  decode_per_parameter(sensitivity, out.sensitivity);
  const Node measurements = m.child("measurements");
  if (measurements.defined() && !measurements.is_sequence()) {
    measurements.error(
        "expected a list of measurements, each {id, file, metric, published, simulated, residual}");
  } else if (measurements.defined()) {
    for (const Node& element : measurements.elements()) {
      MapReader r(element);
      StackFitMeasurement& x = out.measurements.emplace_back();
      r.require("id", x.id);
      r.require("file", x.file);
      r.require("metric", x.metric);
      r.require("published", x.published);
      r.require("simulated", x.simulated);
      r.require("residual", x.residual);
      r.finish();
    }
  }
  m.finish();
}

// The name of the hardware profile beneath the stack in `root`'s layers: below the stack file, or
// the file's own when only a what-if (a scenario's hardware_set, --set) adds the stack. A stack file
// that extends nothing, or that changes the hardware, is an error.
std::string hardware_below(const Node& root, const Node& stack) {
  const std::vector<Layer>& layers = root.layers();
  const auto defines = [&](size_t i, const char* key) {
    return layers[i].node.IsMap() && layers[i].node[key].IsDefined();
  };
  for (size_t i = 0; i < layers.size(); ++i) {
    if (!defines(i, "stack") || !defines(i, "schema_version"))
      continue;  // what-if layers have no schema_version
    if (!defines(i, "extends")) {
      stack.error(
          "a stack profile extends the hardware profile its stack ran on: add `extends: <hardware profile>`");
      return "";
    }
    for (auto it = layers[i].node.begin(); it != layers[i].node.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (std::find(kStackFileKeys.begin(), kStackFileKeys.end(), key) != kStackFileKeys.end()) continue;
      Node({{it->second, layers[i].source}}, key, root.diagnostics())
          .error(fmt::format("a stack profile sets only name, stack and sources; {} belongs to the hardware "
                             "profile it extends (or to a scenario's cluster.hardware_set, as a what-if)",
                             key));
    }
    for (size_t j = i + 1; j < layers.size(); ++j) {
      if (defines(j, "name") && layers[j].node["name"].IsScalar()) return layers[j].node["name"].Scalar();
    }
    return "";
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    if (defines(i, "schema_version") && defines(i, "name")) return layers[i].node["name"].Scalar();
  }
  return "";
}

}  // namespace

void decode_stack(const Node& root, const Node& stack, HardwareProfile& out) {
  StackProfile& s = out.stack.emplace();
  s.hardware_name = hardware_below(root, stack);
  MapReader m(stack);
  m.require("framework", s.framework);
  m.read("description", s.description);
  MapReader parameters(m.child("parameters"));
  decode_parameters(parameters, s.parameters);
  if (const Node fit = m.child("fit"); fit.defined()) {
    MapReader f(fit);
    decode_fit(f, s.fit.emplace());
  }
  m.finish();
}

}  // namespace trainsim::config::internal
