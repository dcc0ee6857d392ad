// Error reporting and the multi-process bootstrap: CPU tests (no device needed) of the CUDA build.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "kernels/cuda/check.h"
#include "kernels/device_query.h"
#include "kernels/nccl/bootstrap.h"

namespace trainsim::kernels {
namespace {

// Runs `call` and returns the GpuError it throws.
template <typename Call>
GpuError caught(Call call) {
  try {
    call();
  } catch (const GpuError& error) {
    return error;
  }
  ADD_FAILURE() << "no GpuError thrown";
  return GpuError(GpuLibrary::kCudaRuntime, 0, "");
}

TEST(CudaCheck, ErrorsCarryFileLineCallAndLibraryMessage) {
  const GpuError cuda = caught([] { CUDA_CHECK(cudaErrorInvalidValue); });
  EXPECT_EQ(cuda.library(), GpuLibrary::kCudaRuntime);
  EXPECT_EQ(cuda.code(), cudaErrorInvalidValue);
  const std::string what = cuda.what();
  EXPECT_NE(what.find("cuda_check_test.cc:"), std::string::npos) << what;
  EXPECT_NE(what.find("cudaErrorInvalidValue"), std::string::npos) << what;
  EXPECT_NE(what.find("invalid argument"), std::string::npos) << what;

  const GpuError cublas = caught([] { CUBLAS_CHECK(CUBLAS_STATUS_NOT_SUPPORTED); });
  EXPECT_EQ(cublas.library(), GpuLibrary::kCublas);
  EXPECT_NE(std::string(cublas.what()).find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos)
      << cublas.what();

  const GpuError nccl = caught([] { NCCL_CHECK(ncclInvalidArgument); });
  EXPECT_EQ(nccl.library(), GpuLibrary::kNccl);
  EXPECT_NE(std::string(nccl.what()).find("NCCL error 4"), std::string::npos) << nccl.what();

  EXPECT_NO_THROW(CUDA_CHECK(cudaSuccess));
}

TEST(DeviceQuery, CountMatchesAvailability) {
  EXPECT_EQ(cuda_device_available(), cuda_device_count() > 0);
  EXPECT_GE(cuda_device_count(), 0);
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

TEST(Bootstrap, LaunchInfoFromLauncherVariables) {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
                           "SLURM_PROCID", "SLURM_NTASKS", "RANK", "WORLD_SIZE"}) {
    unsetenv(name);
  }
  EXPECT_FALSE(launch_info_from_environment().has_value());
  {
    const ScopedEnv rank("SLURM_PROCID", "5"), size("SLURM_NTASKS", "8"), local("SLURM_LOCALID", "1");
    const std::optional<LaunchInfo> info = launch_info_from_environment();
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->rank, 5);
    EXPECT_EQ(info->size, 8);
    EXPECT_EQ(info->local_rank, 1);
    // Open MPI's variables come first.
    const ScopedEnv ompi_rank("OMPI_COMM_WORLD_RANK", "2"), ompi_size("OMPI_COMM_WORLD_SIZE", "4");
    EXPECT_EQ(launch_info_from_environment()->rank, 2);
  }
  const ScopedEnv bad_rank("RANK", "two"), size("WORLD_SIZE", "4");
  EXPECT_THROW(launch_info_from_environment(), std::invalid_argument);
}

TEST(Bootstrap, NonZeroRanksReadTheIdFileOrTimeOut) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "trainsim_nccl_id_test";
  std::filesystem::remove(path);
  EXPECT_THROW(exchange_unique_id(path.string(), 1, std::chrono::milliseconds(50)), std::runtime_error);
  ncclUniqueId written{};
  for (size_t i = 0; i < sizeof(written.internal); ++i) {
    written.internal[i] = static_cast<char>(i * 7);
  }
  {
    std::ofstream out(path, std::ios::binary);
    out.write(written.internal, sizeof(written.internal));
  }
  const ncclUniqueId read = exchange_unique_id(path.string(), 3, std::chrono::milliseconds(1000));
  EXPECT_EQ(std::string(read.internal, sizeof(read.internal)),
            std::string(written.internal, sizeof(written.internal)));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace trainsim::kernels
