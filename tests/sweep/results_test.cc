// The results files: append-only JSON lines that survive a kill mid-write, the tidy CSV, the
// manifest; and the seeded draw of --check-analytic and the progress line.
#include "sim/sweep/results.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/sweep/check.h"
#include "sim/sweep/progress.h"
#include "tests/sweep/sweep_test_util.h"

namespace trainsim::sweep {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::ScratchDir;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json result(size_t index, const std::string& status, double time_s) {
  json r{{"point", {{"index", index}, {"id", "id" + std::to_string(index)}, {"values", {{"tp", index + 1}}}}},
         {"status", status},
         {"reason", status == "ok" ? "" : "does not fit, by 1.5 GiB"},
         {"mode", "simulated"}};
  if (time_s > 0) {
    r["iteration_time_s"] = time_s;
    r["breakdown"] = {{"compute_s", time_s}};
    r["memory"] = {{"fits", status == "ok"}};
  }
  return r;
}

TEST(Results, AppendedLinesReadBackInOrder) {
  ScratchDir dir;
  const std::filesystem::path jsonl = dir.path() / kResultsJsonl;
  {
    ResultsLog log(jsonl);
    log.append(result(0, "ok", 1.5));
    log.append(result(1, "infeasible", 2.5));
  }
  {
    ResultsLog log(jsonl);  // reopening appends
    log.append(result(2, "ok", 0.5));
  }
  const std::vector<json> back = read_results(jsonl);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[1], result(1, "infeasible", 2.5));
  const std::string text = slurp(jsonl);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}

TEST(Results, ATornLastLineIsDroppedAndCutOffBeforeAppending) {
  ScratchDir dir;
  const std::filesystem::path jsonl = dir.path() / kResultsJsonl;
  {
    ResultsLog log(jsonl);
    log.append(result(0, "ok", 1.5));
    log.append(result(1, "ok", 2.5));
  }
  // A kill in the middle of writing the second line.
  const std::string whole = slurp(jsonl);
  const size_t first_end = whole.find('\n') + 1;
  std::filesystem::resize_file(jsonl, first_end + 17);
  size_t torn = 0;
  EXPECT_EQ(read_results(jsonl, &torn).size(), 1u);
  EXPECT_EQ(torn, 17u);
  {
    ResultsLog log(jsonl);
    log.append(result(1, "ok", 2.5));
  }
  EXPECT_EQ(slurp(jsonl), whole);
}

TEST(Results, ACorruptLineInTheMiddleIsAnError) {
  ScratchDir dir;
  const std::filesystem::path jsonl = dir.path() / kResultsJsonl;
  std::ofstream(jsonl) << result(0, "ok", 1).dump() << "\n{broken\n" << result(2, "ok", 1).dump() << "\n";
  try {
    read_results(jsonl);
    FAIL() << "a corrupt line passed";
  } catch (const SweepError& e) {
    EXPECT_THAT(e.what(), HasSubstr("results.jsonl:2: not a result object"));
  }
}

TEST(Results, CsvIsTidyInPointOrderWithUnitsInColumnNames) {
  const std::vector<json> sorted =
      in_point_order({result(2, "ok", 0.5), result(0, "infeasible", 1.5), result(1, "invalid", 0)});
  const std::string csv = results_csv({"tp"}, sorted);
  std::istringstream lines(csv);
  std::string header, row0, row1, row2;
  std::getline(lines, header);
  std::getline(lines, row0);
  std::getline(lines, row1);
  std::getline(lines, row2);
  EXPECT_THAT(header,
              HasSubstr("point_index,point_id,tp,status,reason,mode,scenario,gpus,iteration_time_s,"));
  EXPECT_THAT(header, HasSubstr(",compute_s,"));
  EXPECT_THAT(header, HasSubstr(",peak_hbm_bytes,"));
  EXPECT_THAT(header, HasSubstr(",fits,time_to_train_s,goodput,cost_usd"));
  EXPECT_EQ(row0.rfind("0,id0,1,infeasible,\"does not fit, by 1.5 GiB\",simulated,,,1.5,", 0), 0u) << row0;
  EXPECT_EQ(row1.rfind("1,id1,2,invalid,", 0), 0u) << row1;
  EXPECT_EQ(row2.rfind("2,id2,3,ok,,simulated,,,0.5,", 0), 0u) << row2;
  // Every row has the header's number of fields (the quoted reason holds a comma).
  const auto fields = [](const std::string& line) {
    size_t n = 1;
    bool quoted = false;
    for (const char c : line) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++n;
    }
    return n;
  };
  EXPECT_EQ(fields(row0), fields(header));
  EXPECT_EQ(fields(row1), fields(header));
}

TEST(Results, ManifestRoundTrips) {
  ScratchDir dir;
  SweepManifest m;
  m.name = "demo";
  m.sweep_file = "s.yaml";
  m.hash = "fnv1a64:0123456789abcdef";
  m.axis_names = {"tp", "pp"};
  m.points = 12;
  m.mode = "analytic";
  m.network = "analytic";
  m.shard_index = 1;
  m.shard_count = 3;
  write_manifest(dir.path(), m);
  const SweepManifest back = read_manifest(dir.path());
  EXPECT_EQ(back.to_json(), m.to_json());
  EXPECT_THROW(read_manifest(dir.path() / "nothing"), SweepError);
}

TEST(CheckAnalytic, TheDrawIsSeededAndWithoutRepeats) {
  std::vector<size_t> population(100);
  for (size_t i = 0; i < population.size(); ++i) population[i] = 3 * i;
  const std::vector<size_t> a = draw(population, 10, 7);
  EXPECT_EQ(a, draw(population, 10, 7));
  EXPECT_NE(a, draw(population, 10, 8));
  EXPECT_EQ(std::set<size_t>(a.begin(), a.end()).size(), 10u);
  for (const size_t v : a) EXPECT_EQ(v % 3, 0u);
  EXPECT_EQ(draw(population, 1000, 7).size(), 100u);
}

TEST(CheckAnalytic, TheTableGivesTheMedianAndMaximumError) {
  Point p1{0, "aaaaaaaaaaaa", {{"tp", "parallelism.tp", "2", {}}}};
  Point p2{1, "bbbbbbbbbbbb", {{"tp", "parallelism.tp", "4", {}}}};
  Point p3{2, "cccccccccccc", {{"tp", "parallelism.tp", "8", {}}}};
  std::vector<CheckRow> rows(3);
  rows[0] = {&p1, "ok", "ok", 1.1, 1.0, true, 0.1, ""};
  rows[1] = {&p2, "ok", "ok", 0.7, 1.0, true, -0.3, ""};
  rows[2] = {&p3, "invalid", "invalid", 0, 0, false, 0, "tp does not divide heads"};
  const std::string table = render_check(rows, 5);
  EXPECT_THAT(table, HasSubstr("aaaaaaaaaaaa"));
  EXPECT_THAT(table, HasSubstr("+10.00  tp=2"));
  EXPECT_THAT(table, HasSubstr("tp does not divide heads"));
  EXPECT_THAT(table, HasSubstr("|error| over 2 points: median 20.00%, max 30.00% (point bbbbbbbbbbbb)"));
}

TEST(Progress, SummarySaysDoneRateTimeLeftAndBest) {
  ProgressState s;
  s.done = 30;
  s.total = 120;
  s.elapsed_s = 10;
  s.by_status = {{"ok", 25}, {"infeasible", 5}};
  s.best_tokens_per_s = 123456;
  s.best_point = "abc (tp=8)";
  EXPECT_EQ(s.summary(),
            "30/120 points (25%), 3.0 points/s, 30 s left; infeasible 5, ok 25; best 1.235e+05 tokens/s at "
            "abc (tp=8)");
  EXPECT_EQ(s.bar(8), "[##......]");
  s.done = 1;
  s.elapsed_s = 120;
  s.by_status.clear();
  s.best_tokens_per_s = 0;
  EXPECT_EQ(s.summary(), "1/120 points (1%), 0.5 points/min, 4.0 h left");
}

TEST(Progress, PlainLinesWhenNotATerminal) {
  std::ostringstream out;
  Progress p(out, 2, false, 3600);
  p.update(result(0, "ok", 1.0));
  p.update(result(1, "infeasible", 1.0));
  p.finish();
  // Both updates fall within the interval; the final line is always printed.
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
  EXPECT_THAT(text, HasSubstr("sweep: 2/2 points (100%)"));
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

}  // namespace
}  // namespace trainsim::sweep
