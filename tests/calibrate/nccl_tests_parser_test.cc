// The nccl-tests reader on every collective's format (text and JSON), older layouts, and broken logs:
// truncated anywhere, garbled, or reporting failures, each with a located error.
#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "calibrate/collective_kinds.h"
#include "calibrate/nccl_tests/log.h"
#include "calibrate/nccl_tests/parsers.h"
#include "sim/config/diagnostics.h"
#include "tests/calibrate/nccl_tests_writer.h"
#include "tests/calibrate/test_util.h"

namespace trainsim::calibrate {
namespace {

using config::CollectiveKind;
using testing::SyntheticRun;

SyntheticRun run_of(CollectiveKind kind, int nodes = 1) {
  for (const testing::Fixture& f : testing::fixtures()) {
    if (f.run.kind == kind) {
      SyntheticRun run = f.run;
      run.nodes = nodes;
      return run;
    }
  }
  return {};
}

// The first diagnostic of what `parse` throws, as text; fails the test when nothing is thrown.
template <class F>
std::string error_of(const F& parse) {
  try {
    parse();
  } catch (const config::ConfigError& e) {
    return e.diagnostics().front().to_string();
  }
  ADD_FAILURE() << "no error";
  return "";
}

void expect_rows_match(const NcclTestsLog& log, const SyntheticRun& run) {
  size_t expected_rows = 0;
  for (double b = run.min_bytes; b <= run.max_bytes; b *= 2) ++expected_rows;
  ASSERT_EQ(log.rows.size(), expected_rows);
  for (const NcclTestsRow& row : log.rows) {
    if (row.size_bytes <= 0) continue;
    const double expected_us = 1e6 * testing::model_time_s(run, row.size_bytes);
    // nccl-tests prints at most 2 decimals (text) or 6 (JSON).
    EXPECT_NEAR(row.out_of_place.time_us, expected_us, 0.005 + 1e-4 * expected_us) << row.size_bytes;
    EXPECT_TRUE(row.in_place.present);
    EXPECT_EQ(row.out_of_place.wrong, 0.0);
  }
}

TEST(NcclTestsText, EveryCollectivesFormat) {
  for (const CollectiveKind kind :
       {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
        CollectiveKind::kAllToAll, CollectiveKind::kSendRecv}) {
    const SyntheticRun run = run_of(kind);
    SCOPED_TRACE(std::string(nccl_tests_program(kind)));
    const NcclTestsLog log = parse_nccl_tests_text(testing::nccl_tests_text(run), "log.txt");
    EXPECT_EQ(log.kind, kind);
    EXPECT_EQ(log.program, nccl_tests_program(kind));
    EXPECT_EQ(log.rank_count, 8);
    EXPECT_EQ(log.node_count, 1);
    ASSERT_EQ(log.ranks.size(), 8u);
    EXPECT_EQ(log.ranks[3].device_name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(log.ranks[3].device, 3);
    EXPECT_EQ(log.nccl_version, "2.21.5");
    EXPECT_NE(log.parameters.find("nGpus 8"), std::string::npos);
    expect_rows_match(log, run);
  }
}

TEST(NcclTestsText, RanksAndNodesComeFromTheRankLines) {
  const SyntheticRun run = run_of(CollectiveKind::kAllGather, 4);
  const NcclTestsLog log = parse_nccl_tests_text(testing::nccl_tests_text(run), "log.txt");
  EXPECT_EQ(log.rank_count, 32);
  EXPECT_EQ(log.node_count, 4);
  const std::vector<config::CollectiveSample> samples = samples_of(log);
  ASSERT_FALSE(samples.empty());
  EXPECT_EQ(samples.front().ranks, 32);
  EXPECT_EQ(samples.front().nodes, 4);
  EXPECT_GT(samples.front().bytes, 0);  // rows of size 0 (fewer floats than ranks) are not samples
}

TEST(NcclTestsJson, EveryCollectivesFormat) {
  for (const CollectiveKind kind :
       {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
        CollectiveKind::kAllToAll, CollectiveKind::kSendRecv}) {
    const SyntheticRun run = run_of(kind, 2);
    SCOPED_TRACE(std::string(nccl_tests_program(kind)));
    const NcclTestsLog log = parse_nccl_tests_json(testing::nccl_tests_json(run), "log.json");
    EXPECT_EQ(log.kind, kind);
    EXPECT_EQ(log.rank_count, 16);  // one device entry per process x nGpus
    EXPECT_EQ(log.node_count, 2);
    EXPECT_EQ(log.nccl_version, "2.21.5");
    expect_rows_match(log, run);
  }
}

TEST(NcclTestsText, OlderLayoutsParse) {
  // nccl-tests before 2.13: no version or program lines, no Group, "[0x07]" bus ids, an "error"
  // column and no root column; the program comes from the file name.
  const std::string log_text =
      "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 "
      "validation: 1\n"
      "#\n"
      "# Using devices\n"
      "#   Rank  0 Pid  12345 on     node01 device  0 [0x07] Tesla V100-SXM2-32GB\n"
      "#   Rank  1 Pid  12345 on     node01 device  1 [0x0a] Tesla V100-SXM2-32GB\n"
      "#\n"
      "#                                                     out-of-place                       in-place     "
      "     \n"
      "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  "
      "error\n"
      "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)   "
      "    \n"
      "     1048576        262144   float     sum    40.00   26.21   26.21  0e+00    40.10   26.15   26.15  "
      "0e+00\n"
      "     2097152        524288   float     sum    70.00   29.96   29.96  0e+00    70.20   29.87   29.87  "
      "0e+00\n"
      "     4194304       1048576   float     sum   130.00   32.26   32.26  0e+00   130.50   32.14   32.14  "
      "0e+00\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 29.4767 \n"
      "#\n";
  const NcclTestsLog log = parse_nccl_tests_text(log_text, "logs/all_reduce_perf.v100.txt");
  EXPECT_EQ(log.kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(log.rank_count, 2);
  ASSERT_EQ(log.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(log.rows[2].out_of_place.time_us, 130.0);
  EXPECT_DOUBLE_EQ(log.average_busbw_gbps, 29.4767);
}

TEST(NcclTestsText, ProgramUnknownWithoutHeaderOrFileNameIsAnError) {
  std::string text = testing::nccl_tests_text(run_of(CollectiveKind::kAllReduce));
  text = std::regex_replace(text, std::regex("# Collective test starting: .*\n"), "");
  EXPECT_NE(error_of([&] { parse_nccl_tests_text(text, "results.txt"); }).find("results.txt:1:1: error:"),
            std::string::npos);
  EXPECT_EQ(parse_nccl_tests_text(text, "all_reduce_perf.txt").kind, CollectiveKind::kAllReduce);
}

TEST(NcclTestsText, NcclDebugLinesAndLauncherBannersAreSkipped) {
  std::string text = testing::nccl_tests_text(run_of(CollectiveKind::kAllReduce));
  text = "Warning: Permanently added 'node01' to the list of known hosts.\n" + text;
  const size_t row = text.find("\n         128");
  text.insert(row + 1, "node01:1234:1240 [0] NCCL INFO Channel 00/24 :    0   1   2   3   4   5   6   7\n");
  EXPECT_EQ(parse_nccl_tests_text(text, "log.txt").rows.size(), 28u);
}

TEST(NcclTestsText, PerIterationColumnsParse) {
  std::string text = testing::nccl_tests_text(run_of(CollectiveKind::kSendRecv));
  // nccl-tests -R: i_min i_max i_p99 i_cv% after each group; add them to the header and every row.
  std::string out;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = text.find('\n', begin);
    std::string line = text.substr(begin, end - begin);
    if (line.find("#wrong") != std::string::npos) {
      line = std::regex_replace(line, std::regex("#wrong"), "#wrong  i_min  i_max  i_p99  i_cv%");
    } else if (!line.empty() && line[0] != '#') {
      line += "    1.00    2.00    2.00    3.00";
      // both groups: insert after the first #wrong value too
      const std::regex first_group(R"(^(\s*\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+))");
      line = std::regex_replace(line, first_group, "$1    1.00    2.00    2.00    3.00",
                                std::regex_constants::format_first_only);
    }
    out += line + "\n";
    begin = end + 1;
  }
  const NcclTestsLog log = parse_nccl_tests_text(out, "log.txt");
  expect_rows_match(log, run_of(CollectiveKind::kSendRecv));
}

// A log cut off after any line is refused, with the position where it ends.
TEST(NcclTestsText, TruncatedAnywhereGivesALocatedError) {
  const std::string text = testing::nccl_tests_text(run_of(CollectiveKind::kAllGather));
  std::vector<size_t> ends;
  for (size_t i = text.find('\n'); i != std::string::npos && i + 1 < text.size(); i = text.find('\n', i + 1))
    ends.push_back(i + 1);
  const std::regex located(R"(^log\.txt:\d+:\d+: error: )");
  for (size_t cut : ends) {
    const std::string truncated = text.substr(0, cut);
    if (truncated.find("# Out of bounds values") != std::string::npos) continue;  // complete table
    SCOPED_TRACE(cut);
    EXPECT_TRUE(std::regex_search(error_of([&] { parse_nccl_tests_text(truncated, "log.txt"); }), located));
  }
  // Cut in the middle of a row: the row itself is reported.
  const size_t row = text.find("\n        1024");
  const std::string mid_row = text.substr(0, row + 40);
  EXPECT_NE(error_of([&] { parse_nccl_tests_text(mid_row, "log.txt"); }).find("a garbled or cut row"),
            std::string::npos);
}

TEST(NcclTestsText, GarbledValuesAreLocatedToTheirColumn) {
  const std::string text = testing::nccl_tests_text(run_of(CollectiveKind::kAllReduce));
  const size_t row_start = text.find("\n      262144") + 1;
  const int line =
      static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(row_start), '\n')) + 1;
  std::string garbled = text;
  const size_t time_at = garbled.find_first_of("0123456789", row_start + 60);  // inside the out-of-place time
  garbled[time_at] = 'x';
  const std::string message = error_of([&] { parse_nccl_tests_text(garbled, "log.txt"); });
  EXPECT_EQ(message.rfind(fmt::format("log.txt:{}:", line), 0), 0u) << message;
  EXPECT_NE(message.find("column \"time\": expected a non-negative number"), std::string::npos) << message;
}

// from_chars reads "nan" and "inf": a size or time that is not finite is refused like any garbled value
// (a fuzzed log with a size of "nan" reached the profile writer).
TEST(NcclTestsText, NonFiniteValuesAreRefused) {
  const std::string text = testing::nccl_tests_text(run_of(CollectiveKind::kAllReduce));
  const size_t row_start = text.find("\n      262144") + 1;
  for (const char* word : {"nan", "inf"}) {
    std::string bad = text;
    bad.replace(bad.find("262144", row_start), 6, std::string(6 - std::string(word).size(), ' ') + word);
    const std::string message = error_of([&] { parse_nccl_tests_text(bad, "log.txt"); });
    EXPECT_NE(message.find(fmt::format("column \"size\": expected a non-negative number, got \"{}\"", word)),
              std::string::npos)
        << message;
  }
}

TEST(NcclTestsText, NumbersBeyondRangeInHeaderLinesAreLocated) {
  const std::string text = testing::nccl_tests_text(run_of(CollectiveKind::kAllReduce));
  const size_t at = text.find("nccl-library=");
  ASSERT_NE(at, std::string::npos);
  std::string garbled = text;
  garbled.insert(at + std::string("nccl-library=").size(), "99999999999");
  const std::string message = error_of([&] { parse_nccl_tests_text(garbled, "log.txt"); });
  EXPECT_EQ(message.rfind("log.txt:1:", 0), 0u) << message;
  EXPECT_NE(message.find("nccl-library version 99999999999"), std::string::npos) << message;
  EXPECT_NE(message.find("out of range"), std::string::npos) << message;
}

TEST(NcclTestsText, InconsistentBusBandwidthIsRefused) {
  // An all_reduce log whose rank lines say 8 ranks but whose busbw says 2 (factor 1 instead of 1.75).
  const std::string text = testing::nccl_tests_text(run_of(CollectiveKind::kAllReduce));
  std::string two_ranks;
  size_t begin = 0;
  int rank_lines = 0;
  while (begin < text.size()) {
    const size_t end = text.find('\n', begin);
    const std::string line = text.substr(begin, end - begin + 1);
    const bool rank = line.find("#  Rank") == 0;
    if (!rank || rank_lines++ < 2) two_ranks += line;
    begin = end + 1;
  }
  const std::string message = error_of([&] { parse_nccl_tests_text(two_ranks, "log.txt"); });
  EXPECT_NE(message.find("has factor 1"), std::string::npos) << message;
}

TEST(NcclTestsText, ReportedFailuresAreErrors) {
  const std::string text = testing::nccl_tests_text(run_of(CollectiveKind::kAllReduce));
  const std::string out_of_bounds =
      std::regex_replace(text, std::regex("Out of bounds values : 0 OK"), "Out of bounds values : 3 FAILED");
  EXPECT_NE(error_of([&] { parse_nccl_tests_text(out_of_bounds, "log.txt"); }).find("3 out-of-bounds values"),
            std::string::npos);
  std::string wrong = text;
  const size_t row = wrong.find("\n     1048576");
  const size_t wrong_col = wrong.find("      0", row + 60);
  wrong.replace(wrong_col, 7, "     17");
  EXPECT_NE(error_of([&] { parse_nccl_tests_text(wrong, "log.txt"); }).find("17 wrong elements"),
            std::string::npos);
  const std::string failure = text.substr(0, text.find("#\n#  ")) +
                              "node01: Test NCCL failure common.cu:1005 'unhandled system error'\n";
  EXPECT_NE(
      error_of([&] { parse_nccl_tests_text(failure, "log.txt"); }).find("nccl-tests reported a failure"),
      std::string::npos);
}

TEST(NcclTestsText, SeveralSweepsInOneLogAreRefused) {
  const std::string text = testing::nccl_tests_text(run_of(CollectiveKind::kAllReduce));
  const size_t first = text.find("\n           8");
  const size_t footer = text.find("# Out of bounds");
  const std::string twice =
      text.substr(0, footer) + text.substr(first + 1, footer - first - 1) + text.substr(footer);
  EXPECT_NE(error_of([&] { parse_nccl_tests_text(twice, "log.txt"); }).find("several cycles"),
            std::string::npos);
}

TEST(NcclTestsText, NotANcclTestsLog) {
  EXPECT_NE(error_of([] {
              parse_nccl_tests_text("hello\nworld\n", "notes.txt");
            }).find("no nccl-tests column header"),
            std::string::npos);
}

TEST(NcclTestsJson, TruncatedAndMalformedJsonIsLocated) {
  const std::string text = testing::nccl_tests_json(run_of(CollectiveKind::kAllReduce));
  const std::string truncated = text.substr(0, text.size() / 2);
  const std::string message = error_of([&] { parse_nccl_tests_json(truncated, "log.json"); });
  EXPECT_TRUE(std::regex_search(
      message, std::regex(R"(^log\.json:1:\d+: error: invalid nccl-tests JSON \(the file is truncated\))")))
      << message;
  std::string missing = text;
  const size_t at = missing.find("\"alg_bw\"", missing.find("\"results\""));
  missing.replace(at, 8, "\"algbw_\"");
  const std::string located = error_of([&] { parse_nccl_tests_json(missing, "log.json"); });
  EXPECT_NE(located.find("log.json: error: results[0].out_of_place: missing \"alg_bw\""), std::string::npos)
      << located;
  std::string nan = text;
  const size_t time_at = nan.find("\"time\":", nan.find("\"results\"")) + 7;
  nan.replace(time_at, nan.find(',', time_at) - time_at, "\"nan\"");
  EXPECT_NE(error_of([&] {
              parse_nccl_tests_json(nan, "log.json");
            }).find("results[0].out_of_place.time: expected a number, got \"nan\""),
            std::string::npos);
}

TEST(NcclTestsLog, ReadsFilesOfEitherFormatAndHashesThem) {
  const testing::Fixture f = testing::fixtures().back();  // the JSON one
  const NcclTestsLog log = read_nccl_tests(testing::fixtures_dir() / f.file);
  EXPECT_EQ(log.rank_count, 16);
  EXPECT_EQ(log.content_hash.rfind("fnv1a64:", 0), 0u);
  EXPECT_NE(describe(log).find("all_reduce_perf, 16 ranks on 2 nodes (NVIDIA H100 80GB HBM3), NCCL 2.21.5"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_nccl_tests("/nonexistent/all_reduce_perf.log"); }).find("no such file"),
            std::string::npos);
}

}  // namespace
}  // namespace trainsim::calibrate
