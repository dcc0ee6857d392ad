// The loader refuses input files it could not read in bounded time and memory: devices and pipes
// (/dev/zero never ends, a FIFO may block forever) and files above kMaxInputFileBytes.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/limits.h"
#include "sim/config/loader.h"

namespace trainsim::config {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

std::string error_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(InputFileLimits, DevicesAreRefusedWithoutReadingThem) {
  EXPECT_THAT(error_of([] { load_topology("/dev/zero"); }),
              HasSubstr("cannot read file \"/dev/zero\" (not a regular file)"));
}

TEST(InputFileLimits, APipeIsRefusedWithoutBlocking) {
  const fs::path fifo = fs::temp_directory_path() / ("trainsim-fifo-" + std::to_string(::getpid()));
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string error = error_of([&] { load_scenario(fifo); });
  fs::remove(fifo);
  EXPECT_THAT(error, HasSubstr("(not a regular file)"));
}

TEST(InputFileLimits, AFileAboveTheLimitIsRefusedBeforeItIsRead) {
  const fs::path big = fs::temp_directory_path() / ("trainsim-big-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(big) << "schema_version: 1\n";
  fs::resize_file(big, static_cast<uintmax_t>(kMaxInputFileBytes) + 1);  // sparse: costs no disk
  const std::string error = error_of([&] { load_hardware(big); });
  fs::remove(big);
  EXPECT_THAT(error, HasSubstr("is 67108865 bytes, above the limit of 64MiB for an input file"));
}

TEST(InputFileLimits, TextLoadsResolveReferencesBesideTheirVirtualPath) {
  const fs::path virtual_path = fs::path(TRAINSIM_SOURCE_DIR) / "topologies" / "in-memory.yaml";
  const Topology t = load_topology_text(
      "schema_version: 1\nextends: dgx-a100-superpod.yaml\nname: in-memory\nfabric: {nodes: 4}\n",
      virtual_path);
  EXPECT_EQ(t.name, "in-memory");
  EXPECT_EQ(t.total_gpus(), 32);
  EXPECT_THAT(error_of([&] { load_topology_text("schema_version: 1\nname: x\n", virtual_path); }),
              HasSubstr("in-memory.yaml:1:1: error: node: missing required key"));
}

}  // namespace
}  // namespace trainsim::config
