// nccl-tests' text output. The row layout comes from the column header, e.g. (v2.13+)
//   #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw
//   busbw #wrong #        (B)    (elements)                               (us)  (GB/s)  (GB/s) (us)  (GB/s)
//   (GB/s)
//            8             2     float     sum      -1    25.66    0.00    0.00      0    24.93    0.00 0.00
//            0
// where the first time/algbw/busbw/#wrong group is out-of-place and the second in-place.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate/nccl_tests/parsers.h"
#include "sim/config/diagnostics.h"

namespace trainsim::calibrate {
namespace {

struct Token {
  std::string text;
  int column = 0;  // 1-based
};

std::vector<Token> tokens_of(const std::string& line) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i >= line.size()) break;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    tokens.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return tokens;
}

std::optional<double> number(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  // from_chars reads "nan" and "inf" too: no measurement is either.
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

class TextParser {
 public:
  TextParser(std::string_view text, const std::string& file) : text_(text), file_(file) { log_.file = file; }

  NcclTestsLog parse() {
    size_t begin = 0;
    while (begin < text_.size()) {
      size_t end = text_.find('\n', begin);
      if (end == std::string_view::npos) end = text_.size();
      ++line_number_;
      line(std::string(text_.substr(begin, end - begin)));
      begin = end + 1;
    }
    if (columns_.empty())
      fail(last_line(), 1,
           "no nccl-tests column header (\"#  size  count  type ...\"); is this an nccl-tests log?");
    if (!footer_) {
      fail(last_line(), 1,
           "the log ends before nccl-tests' footer (\"# Out of bounds values\"): the run was cut short, or "
           "the file "
           "is truncated");
    }
    finish_log(log_);
    return std::move(log_);
  }

 private:
  int last_line() const { return std::max(1, line_number_); }

  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    config::throw_config_error({file_, line, column}, "", message);
  }

  // Submatch `k` of `m` (all digits by its regex) as an int; a located error when it overflows.
  int integer(const std::smatch& m, size_t k, const char* what) const {
    int value = 0;
    const std::string digits = m[k].str();
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      fail(line_number_, static_cast<int>(m.position(k)) + 1,
           fmt::format("{} {} is out of range: the line is garbled", what, digits));
    }
    return value;
  }

  void line(const std::string& text) {
    const std::vector<Token> tokens = tokens_of(text);
    if (tokens.empty()) return;
    if (text.find("NCCL INFO") != std::string::npos || text.find("NCCL WARN") != std::string::npos) return;
    const std::regex failure(R"(Test (CUDA|NCCL|MPI) failure|Test failure)");
    if (std::regex_search(text, failure))
      fail(line_number_, tokens.front().column, "nccl-tests reported a failure: " + text);
    if (tokens.front().text[0] == '#') {
      comment(text, tokens);
      return;
    }
    if (columns_.empty() || footer_) return;  // launcher banners before the table, anything after it
    row(tokens);
  }

  void comment(const std::string& text, const std::vector<Token>& tokens) {
    std::smatch m;
    static const std::regex version(R"(^#\s*nccl-tests version \S+ nccl-headers=\d+ nccl-library=(\d+))");
    static const std::regex program(R"(^#\s*Collective test starting:\s*(\S+))");
    static const std::regex rank(
        R"(^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s*(.*?)\s*$)");
    static const std::regex out_of_bounds(R"(^#\s*Out of bounds values\s*:\s*(\d+))");
    static const std::regex average(R"(^#\s*Avg bus bandwidth\s*:\s*(\S+))");
    if (std::regex_search(text, m, version)) {
      const int code = integer(m, 1, "nccl-library version");
      log_.nccl_version = fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
    } else if (std::regex_search(text, m, program)) {
      log_.program = m[1];
    } else if (text.find("nThread") != std::string::npos && text.find("nGpus") != std::string::npos) {
      log_.parameters = text.substr(text.find("nThread"));
    } else if (std::regex_search(text, m, rank)) {
      log_.ranks.push_back({integer(m, 1, "rank"), m[2], integer(m, 3, "device"), m[4]});
    } else if (std::regex_search(text, m, out_of_bounds)) {
      if (columns_.empty()) fail(line_number_, 1, "footer before the column header");
      if (integer(m, 1, "out-of-bounds count") != 0) {
        fail(
            line_number_, static_cast<int>(m.position(1)) + 1,
            fmt::format("nccl-tests found {} out-of-bounds values: the run is broken, its times mean nothing",
                        m[1].str()));
      }
      footer_ = true;
    } else if (std::regex_search(text, m, average)) {
      const std::optional<double> value = number(m[1]);
      if (!value)
        fail(line_number_, static_cast<int>(m.position(1)) + 1,
             "expected a number after \"Avg bus bandwidth :\"");
      log_.average_busbw_gbps = *value;
    } else if (columns_.empty() && tokens.size() > 4 && has(tokens, "size") && has(tokens, "count") &&
               (has(tokens, "time") || has(tokens, "cputime"))) {
      header(tokens);
    }
  }

  static bool has(const std::vector<Token>& tokens, const std::string& word) {
    for (const Token& t : tokens) {
      if (t.text == word) return true;
    }
    return false;
  }

  void header(const std::vector<Token>& tokens) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i == 0 && tokens[i].text == "#") continue;
      std::string name = tokens[i].text;
      if (i == 0 && name[0] == '#') name = name.substr(1);
      if (name == "cputime") name = "time";
      if (name == "error") name = "#wrong";
      columns_.push_back(name);
    }
  }

  void row(const std::vector<Token>& tokens) {
    std::vector<Token> cells = tokens;
    std::vector<std::string> columns = columns_;
    // A timestamp (-T) is one header word but two row tokens; an empty redop (old alltoall) none.
    for (size_t i = 0; i < columns.size(); ++i) {
      if (columns[i] == "timestamp") {
        columns.insert(columns.begin() + static_cast<std::ptrdiff_t>(i) + 1, "timestamp");
        ++i;  // past the second word, which is not another timestamp
      }
    }
    const auto redop = std::find(columns.begin(), columns.end(), "redop");
    if (cells.size() + 1 == columns.size() && redop != columns.end()) {
      cells.insert(cells.begin() + (redop - columns.begin()),
                   Token{"", cells[static_cast<size_t>(redop - columns.begin())].column});
    }
    if (cells.size() != columns.size()) {
      const Token& at = cells.size() > columns.size() ? cells[columns.size()] : cells.back();
      fail(line_number_, at.column,
           fmt::format("expected {} columns as the header says ({}), found {}: a garbled or cut row",
                       columns.size(), fmt::format("{}", fmt::join(columns_, " ")), cells.size()));
    }
    NcclTestsRow r;
    r.line = line_number_;
    int timing_group = -1;  // 0 out-of-place, 1 in-place
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string& name = columns[i];
      const Token& cell = cells[i];
      const auto value = [&](bool allow_na) -> std::optional<double> {
        if (allow_na && cell.text == "N/A") return std::nullopt;
        const std::optional<double> v = number(cell.text);
        if (!v || *v < 0) {
          fail(line_number_, cell.column,
               fmt::format("column \"{}\": expected a non-negative number, got \"{}\"", name, cell.text));
        }
        return v;
      };
      if (name == "time") ++timing_group;
      NcclTestsTiming* t = timing_group == 0 ? &r.out_of_place : timing_group == 1 ? &r.in_place : nullptr;
      if (name == "size") {
        r.size_bytes = *value(false);
      } else if (name == "count") {
        r.count = *value(false);
      } else if (name == "type") {
        r.type = cell.text;
      } else if (name == "redop") {
        r.redop = cell.text;
      } else if (name == "root") {
        r.root = cell.text;
      } else if (t != nullptr && name == "time") {
        t->present = true;
        t->time_us = *value(false);
      } else if (t != nullptr && name == "algbw") {
        t->algbw_gbps = *value(false);
      } else if (t != nullptr && name == "busbw") {
        t->busbw_gbps = *value(false);
      } else if (t != nullptr && name == "#wrong") {
        t->wrong = value(true);
      }
    }
    if (r.size_bytes > 0 && r.out_of_place.present && !(r.out_of_place.time_us > 0)) {
      fail(line_number_, cells[0].column, "a row of positive size with no time");
    }
    log_.rows.push_back(std::move(r));
  }

  std::string_view text_;
  std::string file_;
  NcclTestsLog log_;
  std::vector<std::string> columns_;
  int line_number_ = 0;
  bool footer_ = false;
};

}  // namespace

NcclTestsLog parse_nccl_tests_text(std::string_view text, const std::string& file) {
  return TextParser(text, file).parse();
}

}  // namespace trainsim::calibrate
