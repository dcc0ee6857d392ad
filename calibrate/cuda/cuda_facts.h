// What the GPUs of this node and their software are: device properties, the driver, CUDA runtime,
// cuBLASLt and NCCL versions, the PCIe link, and the host (calibrate/cpu/cpu_facts.h).
#ifndef TRAINSIM_CALIBRATE_CUDA_CUDA_FACTS_H_
#define TRAINSIM_CALIBRATE_CUDA_CUDA_FACTS_H_

#include "calibrate/backend.h"

namespace trainsim::calibrate::cuda {

// Facts of device 0 (the node's GPUs are assumed alike) with `devices` GPUs in use. Throws GpuError
// when the runtime fails; versions it cannot read are left empty.
DeviceFacts cuda_facts(int devices);

// Compute capability of device 0, e.g. {9, 0}.
std::pair<int, int> compute_capability();

}  // namespace trainsim::calibrate::cuda

#endif  // TRAINSIM_CALIBRATE_CUDA_CUDA_FACTS_H_
