// The CUDA backend's module (calibrate/cuda_module.h) loads from the build tree and its backend
// answers: it starts on a GPU, or refuses for want of one; either way the loader did its part.
#include "calibrate/cuda_module.h"

#include <memory>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "kernels/device_query.h"

namespace trainsim::calibrate {
namespace {

TEST(CudaModule, LoadsAndStartsTheBackend) {
  if (kernels::cuda_device_count() > 0) {
    const std::unique_ptr<Backend> backend = make_cuda_backend(1, "mma.sync");
    ASSERT_NE(backend, nullptr);
    EXPECT_EQ(backend->facts().backend, "cuda");
    EXPECT_EQ(backend->facts().devices, 1);
    return;
  }
  try {
    make_cuda_backend(1, "mma.sync");
    FAIL() << "a CUDA backend without a device";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()).find("cannot load the CUDA backend's module"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace trainsim::calibrate
