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

ImportOptions import_options() {
  return {"",
          "h100-sxm5-80gb.yaml",
          "2026-11-29T12:00:00Z",
          "trainsim test",
          "trainsim calibrate import-nccl-tests ...",
          ""};
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
  const ProfileDocument doc = import_nccl_tests(base, logs, import_options());
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
  const ProfileDocument doc = import_nccl_tests(base, logs, import_options());
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
      import_nccl_tests(base, {logs[0], logs[1]}, import_options());  // all_reduce, all_gather x 8
  const std::filesystem::path file = testing::scratch_dir() / "first.yaml";
  write_profile(file, first, false);
  const config::HardwareProfile again = config::load_hardware(file);
  const ProfileDocument second = import_nccl_tests(again, {logs[0]}, import_options());  // all_reduce again
  size_t gathers = 0;
  for (const config::CollectiveSample& s : second.profile.collective_samples) {
    gathers += s.kind == config::CollectiveKind::kAllGather ? 1 : 0;
  }
  EXPECT_EQ(gathers, samples_of(logs[1]).size());
  EXPECT_EQ(second.profile.collective_samples.size(),
            samples_of(logs[0]).size() + samples_of(logs[1]).size());
  EXPECT_THROW(import_nccl_tests(base, {logs[0], logs[0]}, import_options()), std::invalid_argument);
}

// A JSON log whose env pins one algorithm (NCCL_ALGO=Ring) imports as that algorithm's table, beside
// the table of NCCL's own choice for the same GPUs; one that pins none of ring, tree or nvls is refused
// unless the import says how to read it.
TEST(Import, KeepsTablesOfOnePinnedAlgorithmApart) {
  testing::SyntheticRun ring = testing::fixtures().front().run;  // all_reduce over 8 GPUs
  ring.nccl_algo = "Ring";
  for (testing::ModelRange& range : ring.model) range.bus_bandwidth_bytes_per_s *= 0.7;
  const std::filesystem::path file = testing::scratch_dir() / "all_reduce_ring.json";
  testing::write_file(file, testing::nccl_tests_json(ring));
  const NcclTestsLog pinned = read_nccl_tests(file);
  EXPECT_EQ(pinned.nccl_algo, "Ring");
  ASSERT_TRUE(pinned.algorithm.has_value());
  EXPECT_EQ(*pinned.algorithm, config::CollectiveAlgorithm::kRing);
  EXPECT_NE(describe(pinned).find("NCCL_ALGO=Ring"), std::string::npos);

  const NcclTestsLog choice = fixture_logs().front();
  const ProfileDocument doc = import_nccl_tests(h100(), {choice, pinned}, import_options());
  size_t ring_samples = 0;
  size_t ring_fits = 0;
  for (const config::CollectiveSample& s : doc.profile.collective_samples)
    ring_samples += s.algorithm ? 1 : 0;
  for (const config::CollectiveFit& f : doc.profile.collective_fits) {
    if (!f.algorithm) continue;
    ++ring_fits;
    EXPECT_EQ(*f.algorithm, config::CollectiveAlgorithm::kRing);
  }
  EXPECT_EQ(ring_samples, samples_of(pinned).size());
  EXPECT_EQ(ring_fits, ring.model.size());
  // The algorithm survives the file.
  const std::filesystem::path out = testing::scratch_dir() / "imported-ring.yaml";
  write_profile(out, doc, false);
  testing::expect_same_profile(config::load_hardware(out), doc.profile);

  // --algorithm auto reads the pinned log as NCCL's choice, which the other log already holds.
  ImportOptions as_choice = import_options();
  as_choice.algorithm = "auto";
  EXPECT_THROW(import_nccl_tests(h100(), {choice, pinned}, as_choice), std::invalid_argument);

  NcclTestsLog excluded = pinned;
  excluded.nccl_algo = "^NVLS";
  excluded.algorithm.reset();
  try {
    import_nccl_tests(h100(), {excluded}, import_options());
    ADD_FAILURE() << "NCCL_ALGO=^NVLS imported without --algorithm";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NCCL_ALGO=^NVLS, which pins no one algorithm"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--algorithm auto"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(import_nccl_tests(h100(), {excluded}, as_choice).profile.collective_fits.back().algorithm);
}

TEST(Import, PinnedAlgorithmSpellings) {
  EXPECT_EQ(pinned_algorithm("Ring"), config::CollectiveAlgorithm::kRing);
  EXPECT_EQ(pinned_algorithm("tree"), config::CollectiveAlgorithm::kTree);
  EXPECT_EQ(pinned_algorithm("NVLS"), config::CollectiveAlgorithm::kNvls);
  EXPECT_FALSE(pinned_algorithm("Ring,Tree"));
  EXPECT_FALSE(pinned_algorithm("^NVLS"));
  EXPECT_FALSE(pinned_algorithm("PAT"));
  EXPECT_FALSE(pinned_algorithm("allreduce:ring"));
  EXPECT_FALSE(pinned_algorithm(""));
}

}  // namespace
}  // namespace trainsim::calibrate
