#include "sim/config/stack.h"

#include <algorithm>

namespace trainsim::config {

const std::array<StackParameterInfo, kStackParameterCount>& stack_parameter_table() {
  using P = StackParameter;
  static const std::array<StackParameterInfo, kStackParameterCount> kTable = {{
      {P::kGemmFraction, "gemm_fraction", false, 1.0, 0.3, 1.1, true,
       "GEMM rate (the profile's efficiency and measured GEMM samples) as a fraction of the hardware "
       "profile's: the library version, layouts and clocks the stack runs GEMMs with"},
      {P::kAttentionFraction, "attention_fraction", false, 1.0, 0.2, 1.1, true,
       "rate of the fused attention kernel in use, forward and backward, as a fraction of the hardware "
       "profile's attention efficiencies or samples"},
      {P::kMemoryFraction, "memory_fraction", false, 1.0, 0.2, 1.1, true,
       "HBM bandwidth the stack's memory-bound kernels (norms, activations, element-wise passes, the "
       "optimizer step) reach, as a fraction of the hardware profile's"},
      {P::kHostDispatch, "host_dispatch", true, 0.0, 0.0, 100e-6, true,
       "host time to issue one op (framework code, Python, the kernel launch): a GPU whose kernels are "
       "shorter waits for its host"},
      {P::kCollectiveFractionNvlink, "collective_fraction_nvlink", false, 1.0, 0.3, 1.1, true,
       "bus bandwidth the stack's collectives reach inside a node, as a fraction of the hardware "
       "profile's collective fits"},
      {P::kCollectiveFractionNetwork, "collective_fraction_network", false, 1.0, 0.3, 1.1, false,
       "bus bandwidth of collectives and messages that cross the NICs, as a fraction of the topology's "
       "(single-node measurements cannot determine it)"},
  }};
  return kTable;
}

const StackParameterInfo& info_of(StackParameter parameter) {
  return stack_parameter_table()[static_cast<size_t>(parameter)];
}

std::optional<StackParameter> parse_stack_parameter(std::string_view name) {
  for (const StackParameterInfo& info : stack_parameter_table()) {
    if (info.name == name) return info.id;
  }
  return std::nullopt;
}

StackParameters::StackParameters() {
  for (const StackParameterInfo& info : stack_parameter_table())
    values_[static_cast<size_t>(info.id)] = info.neutral;
}

bool StackParameters::neutral() const {
  return std::ranges::all_of(stack_parameter_table(), [this](const StackParameterInfo& info) {
    return (*this)[info.id] == info.neutral;
  });
}

}  // namespace trainsim::config
