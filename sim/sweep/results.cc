#include "sim/sweep/results.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <fmt/format.h>

#include "sim/common/atomic_file.h"
#include "sim/report/csv.h"

namespace trainsim::sweep {

using nlohmann::json;

json SweepManifest::to_json() const {
  return {{"schema_version", 1},
          {"name", name},
          {"sweep_file", sweep_file},
          {"sweep_hash", hash},
          {"axes", axis_names},
          {"points", points},
          {"mode", mode},
          {"network", network},
          {"full", full},
          {"all_traffic", all_traffic},
          {"shard", {{"index", shard_index}, {"count", shard_count}}}};
}

std::string SweepManifest::evaluation() const {
  if (mode == "analytic") return mode;
  return fmt::format("{} ({} network{})", mode, network,
                     full          ? ", every rank"
                     : all_traffic ? ", every rank's traffic"
                                   : "");
}

SweepManifest SweepManifest::from_json(const json& j, const std::string& source) {
  try {
    SweepManifest m;
    m.name = j.at("name").get<std::string>();
    m.sweep_file = j.at("sweep_file").get<std::string>();
    m.hash = j.at("sweep_hash").get<std::string>();
    m.axis_names = j.at("axes").get<std::vector<std::string>>();
    m.points = j.at("points").get<size_t>();
    m.mode = j.at("mode").get<std::string>();
    m.network = j.at("network").get<std::string>();
    m.full = j.value("full", false);                // absent from manifests written before sweep --full
    m.all_traffic = j.value("all_traffic", false);  // and before sweep --all-traffic
    m.shard_index = j.at("shard").at("index").get<size_t>();
    m.shard_count = j.at("shard").at("count").get<size_t>();
    return m;
  } catch (const json::exception& e) {
    throw SweepError(fmt::format("{}: not a sweep manifest ({})", source, e.what()));
  }
}

SweepManifest read_manifest(const std::filesystem::path& dir) {
  const std::filesystem::path file = dir / kSweepJson;
  std::ifstream in(file);
  if (!in) {
    throw SweepError(fmt::format("{} has no {}: it is not the output directory of trainsim sweep",
                                 dir.string(), kSweepJson));
  }
  json j;
  try {
    in >> j;
  } catch (const json::exception& e) {
    throw SweepError(fmt::format("{}: invalid JSON ({})", file.string(), e.what()));
  }
  return SweepManifest::from_json(j, file.string());
}

void write_manifest(const std::filesystem::path& dir, const SweepManifest& manifest) {
  write_file_atomically(dir / kSweepJson, manifest.to_json().dump(2) + "\n");
}

std::vector<json> read_results(const std::filesystem::path& jsonl, size_t* torn_bytes) {
  if (torn_bytes != nullptr) *torn_bytes = 0;
  std::vector<json> out;
  std::ifstream in(jsonl, std::ios::binary);
  if (!in) return out;
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  size_t start = 0, line = 1;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const bool last = end == std::string::npos || end + 1 == text.size();
    const std::string_view content(text.data() + start,
                                   (end == std::string::npos ? text.size() : end) - start);
    json value = json::parse(content, nullptr, false);
    if (end == std::string::npos || value.is_discarded() || !value.is_object()) {
      if (last) {
        if (torn_bytes != nullptr) *torn_bytes = text.size() - start;
        break;
      }
      throw SweepError(
          fmt::format("{}:{}: not a result object; the file was edited or corrupted (move the "
                      "bad line away and rerun with --resume)",
                      jsonl.string(), line));
    }
    out.push_back(std::move(value));
    start = end + 1;
    ++line;
  }
  return out;
}

ResultsLog::ResultsLog(const std::filesystem::path& jsonl) : path_(jsonl) {
  size_t torn = 0;
  read_results(jsonl, &torn);
  if (torn > 0) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(jsonl, ec);
    if (!ec) std::filesystem::resize_file(jsonl, size - torn, ec);
    if (ec)
      throw SweepError(fmt::format("cannot cut the torn last line of {}: {}", jsonl.string(), ec.message()));
  }
  fd_ = ::open(jsonl.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw SweepError(fmt::format("cannot open {}: {}", jsonl.string(), std::strerror(errno)));
}

ResultsLog::~ResultsLog() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultsLog::append(const json& result) {
  const std::string line = result.dump() + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw SweepError(fmt::format("cannot write {}: {}", path_.string(), std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
  while (::fsync(fd_) != 0) {
    if (errno != EINTR)
      throw SweepError(fmt::format("cannot flush {}: {}", path_.string(), std::strerror(errno)));
  }
}

std::vector<json> in_point_order(std::vector<json> results) {
  std::stable_sort(results.begin(), results.end(), [](const json& a, const json& b) {
    return a.at("point").at("index").get<size_t>() < b.at("point").at("index").get<size_t>();
  });
  return results;
}

std::string results_csv(const std::vector<std::string>& axis_names, const std::vector<json>& results) {
  std::vector<std::string> header{"point_index", "point_id"};
  header.insert(header.end(), axis_names.begin(), axis_names.end());
  for (const char* c : {"status", "reason", "mode"}) header.emplace_back(c);
  for (const auto& [column, pointer] : report::metric_columns()) header.push_back(column);
  std::string out;
  out += fmt::format("{}\n", fmt::join(header.begin(), header.end(), ","));
  for (const json& r : results) {
    std::vector<std::string> row{report::csv_value(report::value_at(r, "/point/index")),
                                 report::csv_value(report::value_at(r, "/point/id"))};
    for (const std::string& axis : axis_names)
      row.push_back(report::csv_value(report::value_at(r, "/point/values/" + axis)));
    for (const char* c : {"/status", "/reason", "/mode"})
      row.push_back(report::csv_value(report::value_at(r, c)));
    for (const auto& [column, pointer] : report::metric_columns())
      row.push_back(report::csv_value(report::value_at(r, pointer)));
    out += fmt::format("{}\n", fmt::join(row, ","));
  }
  return out;
}

void write_results_csv(const std::filesystem::path& dir, const std::vector<std::string>& axis_names) {
  write_file_atomically(dir / kResultsCsv,
                        results_csv(axis_names, in_point_order(read_results(dir / kResultsJsonl))));
}

}  // namespace trainsim::sweep
