// Stack profiles: what one software stack (framework, kernel and collective libraries, the clocks it
// ran at) achieves on the hardware a hardware profile describes (docs/DESIGN.md decision 8). A stack
// profile is a hardware-profile file that `extends` the hardware profile it was measured on and adds
// a `stack` section: a few named, bounded parameters with physical meaning, fitted by `trainsim
// calibrate fit-stack` on single-node measurements of that stack, and the record of that fit.
// Scenarios name a stack profile where they name a hardware profile; without one, every parameter is
// neutral and the hardware profile's numbers apply as they are. calibrate/README.md ("Stack
// profiles") documents the format.
#ifndef TRAINSIM_SIM_CONFIG_STACK_H_
#define TRAINSIM_SIM_CONFIG_STACK_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::config {

enum class StackParameter : uint8_t {
  kGemmFraction,               // GEMM rate, as a fraction of the hardware profile's
  kAttentionFraction,          // fused (flash-style) attention kernels' rate, a fraction of the profile's
  kMemoryFraction,             // memory-bound kernels' bandwidth, a fraction of the profile's
  kHostDispatch,               // host time to issue one op (framework, Python, launch), seconds
  kCollectiveFractionNvlink,   // bus bandwidth of collectives inside a node, a fraction of the profile's
  kCollectiveFractionNetwork,  // the same for collectives and messages that cross the NICs
};
inline constexpr int kStackParameterCount = 6;

// What a parameter means and how it is written and bounded.
struct StackParameterInfo {
  StackParameter id;
  std::string_view name;  // spelling in files and on the command line
  bool duration;          // written as a duration with a unit ("6us"); otherwise a plain number
  double neutral;         // the value that leaves the hardware profile's numbers as they are
  double lower;           // bounds of a fit (and of a value written by hand)
  double upper;
  // Whether measurements on one node can determine it (the NIC fraction needs traffic between nodes).
  bool single_node;
  std::string_view meaning;
};

// Every parameter, in declaration order.
const std::array<StackParameterInfo, kStackParameterCount>& stack_parameter_table();
const StackParameterInfo& info_of(StackParameter parameter);
// The parameter spelt `name`, if any.
std::optional<StackParameter> parse_stack_parameter(std::string_view name);

// The values of every parameter (neutral unless set).
class StackParameters {
 public:
  StackParameters();
  double operator[](StackParameter p) const { return values_[static_cast<size_t>(p)]; }
  double& operator[](StackParameter p) { return values_[static_cast<size_t>(p)]; }
  // Whether every parameter is neutral.
  bool neutral() const;

 private:
  std::array<double, kStackParameterCount> values_;
};

// One measurement a stack was fitted on, and how the fitted stack reproduces it.
struct StackFitMeasurement {
  std::string id;      // the validation case's id
  std::string file;    // the case file, relative to the stack profile
  std::string metric;  // as validation cases spell it
  double published = 0;
  double simulated = 0;  // with the fitted parameters
  double residual = 0;   // (simulated - published) / published
};

// How a stack's parameters were fitted (`stack.fit`).
struct StackFit {
  std::vector<StackParameter> parameters;  // the fitted ones, in table order
  // Where the measurements came from: case files or folders, and profiled runs (a scenario and the
  // PyTorch profiler trace of one of its ranks), relative to the stack profile.
  std::vector<std::string> inputs;
  std::vector<std::pair<std::string, std::string>> traces;  // (scenario, trace)
  std::string command;  // the command that refits the profile (with the inputs and parameters above)
  std::string tool_version;
  double rms_residual = 0;  // root mean square of the measurements' residuals
  // One standard error of each fitted parameter (absent when the fit has no spare measurement).
  std::map<StackParameter, double> uncertainty;
  // How much the rms residual grows when the parameter moves by 1 % of its value either way.
  std::map<StackParameter, double> sensitivity;
  std::vector<StackFitMeasurement> measurements;
};

struct StackProfile {
  std::string hardware_name;  // the hardware profile it extends
  std::string framework;      // e.g. "megatron-lm"
  std::string description;    // the stack in words: framework release, libraries, where it ran
  StackParameters parameters;
  std::optional<StackFit> fit;
};

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_STACK_H_
