// Importing nccl-tests logs into a profile: the samples are the log's rows, the fits recover the
// model the logs were written from, everything else of the base profile is kept with its sources.
#include "calibrate/nccl_tests/import.h"

#include <cmath>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "calibrate/fit/collective_fits.h"
#include "calibrate/profile/writer.h"
#include "sim/config/loader.h"
#include "tests/calibrate/nccl_tests_writer.h"
#include "tests/calibrate/profile_compare.h"
#include "tests/calibrate/test_util.h"

namespace trainsim::calibrate {
namespace {

config::HardwareProfile h100() {
  return config::load_hardware(testing::source_dir() / "calibrate/profiles/h100-sxm5-80gb.yaml");
}

ImportOptions options() {
  return {"", "h100-sxm5-80gb.yaml", "2026-11-29T12:00:00Z", "trainsim test",
          "trainsim calibrate import-nccl-tests ..."};
}

std::vector<NcclTestsLog> fixture_logs() {
  std::vector<NcclTestsLog> logs;
  for (const testing::Fixture& f : testing::fixtures())
    logs.push_back(read_nccl_tests(testing::fixtures_dir() / f.file));
  return logs;
}

TEST(Import, SamplesAreTheRowsAndFitsRecoverTheModel) {
  const std::vector<NcclTestsLog> logs = fixture_logs();
  const config::HardwareProfile base = h100();
  const ProfileDocument doc = import_nccl_tests(base, logs, options());
  const config::HardwareProfile& p = doc.profile;
  size_t rows = 0;
  for (const NcclTestsLog& log : logs) rows += samples_of(log).size();
  EXPECT_EQ(p.collective_samples.size(), rows);
  for (const testing::Fixture& f : testing::fixtures()) {
    SCOPED_TRACE(f.file);
    const int ranks = f.run.nodes * f.run.gpus_per_node;
    // Every imported size is predicted by the fits within 1 % away from the protocol switches, and
    // within 5 % everywhere (a switch can fall between two sampled sizes).
    for (const config::CollectiveSample& s : p.collective_samples) {
      if (s.kind != f.run.kind || s.ranks != ranks) continue;
      const config::CollectiveFit* fit = nullptr;
      for (const config::CollectiveFit& candidate : p.collective_fits) {
        if (candidate.kind == s.kind && candidate.ranks == s.ranks && candidate.nodes == s.nodes &&
            s.bytes >= candidate.min_bytes && s.bytes <= candidate.max_bytes) {
          fit = &candidate;
        }
      }
      ASSERT_NE(fit, nullptr) << s.bytes;
      const double model = testing::model_time_s(f.run, s.bytes);
      EXPECT_NEAR(predicted_duration_s(*fit, s.bytes), model, 0.05 * model) << s.bytes;
    }
    // The fitted ranges are the model's ranges, with its latency and bus bandwidth within 1 %.
    for (const testing::ModelRange& range : f.run.model) {
      const double middle = std::sqrt(std::max(range.min_bytes, 8.0) * range.max_bytes);
      const config::CollectiveFit* fit = nullptr;
      for (const config::CollectiveFit& candidate : p.collective_fits) {
        if (candidate.kind == f.run.kind && candidate.ranks == ranks && middle >= candidate.min_bytes &&
            middle <= candidate.max_bytes) {
          fit = &candidate;
        }
      }
      ASSERT_NE(fit, nullptr);
      EXPECT_NEAR(fit->bus_bandwidth_bytes_per_s, range.bus_bandwidth_bytes_per_s,
                  0.01 * range.bus_bandwidth_bytes_per_s);
      EXPECT_NEAR(fit->latency_s, range.latency_s, 0.01 * range.latency_s);
    }
  }
}

TEST(Import, KeepsTheBaseAndCitesEveryImportedRow) {
  const std::vector<NcclTestsLog> logs = fixture_logs();
  const config::HardwareProfile base = h100();
  const ProfileDocument doc = import_nccl_tests(base, logs, options());
  const config::HardwareProfile& p = doc.profile;
  EXPECT_EQ(p.name, "h100-sxm5-80gb-nccl");
  EXPECT_EQ(p.gpu.peak_flops_per_s, base.gpu.peak_flops_per_s);
  EXPECT_EQ(p.source_of("gpu.peak_flops.bf16"), base.source_of("gpu.peak_flops.bf16"));
  EXPECT_EQ(p.provenance.kind, config::ProvenanceKind::kImported);
  for (size_t i = 0; i < p.collective_samples.size(); ++i) {
    EXPECT_EQ(p.source_of(fmt::format("collective_samples[{}].time", i)).rfind("imported: ", 0), 0u) << i;
  }
  EXPECT_NE(p.source_of("collective_samples[0]")
                .find("all_reduce_perf.8xh100.log (all_reduce_perf, 8 ranks on 1 node"),
            std::string::npos);
  EXPECT_EQ(p.source_of("collective_fits[0]").rfind("fitted to the rows imported: ", 0), 0u);
  // The file loads, the same values come back, and it is a new file: the base is untouched.
  const std::filesystem::path out = testing::scratch_dir() / "imported.yaml";
  write_profile(out, doc, false);
  testing::expect_same_profile(config::load_hardware(out), p);
}

TEST(Import, ReplacesOnlyTheGroupsItImports) {
  std::vector<NcclTestsLog> logs = fixture_logs();
  const config::HardwareProfile base = h100();
  ProfileDocument first =
      import_nccl_tests(base, {logs[0], logs[1]}, options());  // all_reduce, all_gather x 8
  const std::filesystem::path file = testing::scratch_dir() / "first.yaml";
  write_profile(file, first, false);
  const config::HardwareProfile again = config::load_hardware(file);
  const ProfileDocument second = import_nccl_tests(again, {logs[0]}, options());  // all_reduce again
  size_t gathers = 0;
  for (const config::CollectiveSample& s : second.profile.collective_samples) {
    gathers += s.kind == config::CollectiveKind::kAllGather ? 1 : 0;
  }
  EXPECT_EQ(gathers, samples_of(logs[1]).size());
  EXPECT_EQ(second.profile.collective_samples.size(),
            samples_of(logs[0]).size() + samples_of(logs[1]).size());
  EXPECT_THROW(import_nccl_tests(base, {logs[0], logs[0]}, options()), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::calibrate
