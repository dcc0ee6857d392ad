// Whether a CUDA device can run the kernels here. Part of trainsim::kernels_reference (always
// built), so tests and the calibration harness can decide to skip without a CUDA build.
#ifndef TRAINSIM_KERNELS_DEVICE_QUERY_H_
#define TRAINSIM_KERNELS_DEVICE_QUERY_H_

namespace trainsim::kernels {

// Number of CUDA devices the runtime reports; 0 when this build has no CUDA kernels, or when the
// runtime reports any error (no driver, a driver older than the runtime, no device). Never throws.
int cuda_device_count() noexcept;

// True when cuda_device_count() > 0.
bool cuda_device_available() noexcept;

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_DEVICE_QUERY_H_
