// nccl-tests' JSON output (-J FILE, util.cu, JSON_FILE_VERSION 2):
//   {"version":2, "start_time":..., "args":[argv...], "env":[...], "nccl_version":22105,
//    "config":{"nthreads":1, "ngpus":8, ..., "devices":[{"rank":0, "group":0, "pid":.., "hostname":"node01",
//              "device":0, "device_hex":"...", "device_info":"NVIDIA H100 80GB HBM3"}, ...]},
//    "results":[{"size":8, "count":2, "type":"float", "redop":"sum", "root":"    -1",
//                "out_of_place":{"time":25.6, "alg_bw":0.0, "bus_bw":0.0, "nwrong":0}, "in_place":{...}},
//                ...],
//    "out_of_bounds":{"count":0, "okay":"true"}, "average_bus_bandwidth":{"bandwidth":..., ...}, ...}
// Each process writes one device entry (its first GPU), so ranks = devices x nthreads x ngpus.
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibrate/nccl_tests/parsers.h"
#include "sim/config/diagnostics.h"

namespace trainsim::calibrate {
namespace {

using nlohmann::json;

class JsonReader {
 public:
  explicit JsonReader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    config::throw_config_error({file_}, path, message);
  }

  const json& member(const json& object, const std::string& path, const char* key) const {
    if (!object.is_object() || !object.contains(key)) fail(path, fmt::format("missing \"{}\"", key));
    return object.at(key);
  }

  double number(const json& value, const std::string& path) const {
    if (value.is_number()) return value.get<double>();
    if (value.is_string()) {  // nccl-tests writes NaN as "nan"
      fail(path, fmt::format("expected a number, got \"{}\"", value.get<std::string>()));
    }
    fail(path, fmt::format("expected a number, got {}", value.dump()));
  }

  std::string text(const json& value, const std::string& path) const {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_number()) return value.dump();
    fail(path, fmt::format("expected a string, got {}", value.dump()));
  }

  NcclTestsTiming timing(const json& result, const std::string& path, const char* key) const {
    NcclTestsTiming t;
    if (!result.contains(key) || result.at(key).is_null()) return t;
    const json& v = result.at(key);
    const std::string here = path + "." + key;
    if (!v.is_object()) fail(here, "expected an object");
    t.present = true;
    const char* time_key = v.contains("time") ? "time" : "cpu_time";
    t.time_us = number(member(v, here, time_key), here + "." + time_key);
    t.algbw_gbps = number(member(v, here, "alg_bw"), here + ".alg_bw");
    t.busbw_gbps = number(member(v, here, "bus_bw"), here + ".bus_bw");
    if (v.contains("nwrong") && !v.at("nwrong").is_null()) t.wrong = number(v.at("nwrong"), here + ".nwrong");
    return t;
  }

 private:
  std::string file_;
};

// 1-based line and column of byte `offset` of `text`.
config::Location location_of(std::string_view text, size_t offset, const std::string& file) {
  int line = 1;
  int column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {file, line, column};
}

}  // namespace

NcclTestsLog parse_nccl_tests_json(std::string_view text, const std::string& file) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    const bool truncated = e.byte >= text.size();
    config::throw_config_error(
        location_of(text, e.byte == 0 ? 0 : e.byte - 1, file), "",
        fmt::format("invalid nccl-tests JSON{}: {}", truncated ? " (the file is truncated)" : "", e.what()));
  } catch (const json::out_of_range& e) {  // a number beyond double or 64-bit range: a garbled file
    config::throw_config_error({file}, "", fmt::format("invalid nccl-tests JSON: {}", e.what()));
  }
  const JsonReader r(file);
  NcclTestsLog log;
  log.file = file;
  if (!doc.is_object()) r.fail("", "expected a JSON object (nccl-tests -J output)");
  if (doc.contains("args") && doc.at("args").is_array() && !doc.at("args").empty()) {
    log.program = r.text(doc.at("args").at(0), "args[0]");
    log.program = log.program.substr(log.program.find_last_of('/') + 1);
    for (const json& a : doc.at("args")) {
      if (!log.parameters.empty()) log.parameters += ' ';
      log.parameters += r.text(a, "args");
    }
  }
  if (doc.contains("nccl_version") && doc.at("nccl_version").is_number_integer()) {
    const int code = doc.at("nccl_version").get<int>();
    log.nccl_version = fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
  }
  if (doc.contains("env") && doc.at("env").is_array()) {
    for (size_t i = 0; i < doc.at("env").size(); ++i) {
      const std::string entry = r.text(doc.at("env").at(i), fmt::format("env[{}]", i));
      if (entry.rfind("NCCL_ALGO=", 0) == 0) log.nccl_algo = entry.substr(10);
    }
    log.algorithm = pinned_algorithm(log.nccl_algo);
  }
  const json& config = r.member(doc, "", "config");
  const json& devices = r.member(config, "config", "devices");
  if (!devices.is_array()) r.fail("config.devices", "expected a list");
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string path = fmt::format("config.devices[{}]", i);
    const json& d = devices[i];
    log.ranks.push_back(
        {static_cast<int>(r.number(r.member(d, path, "rank"), path + ".rank")),
         r.text(r.member(d, path, "hostname"), path + ".hostname"),
         static_cast<int>(r.number(r.member(d, path, "device"), path + ".device")),
         d.contains("device_info") ? r.text(d.at("device_info"), path + ".device_info") : ""});
  }
  const int threads = static_cast<int>(r.number(r.member(config, "config", "nthreads"), "config.nthreads"));
  const int gpus = static_cast<int>(r.number(r.member(config, "config", "ngpus"), "config.ngpus"));
  log.rank_count = static_cast<int>(devices.size()) * threads * gpus;
  const json& results = r.member(doc, "", "results");
  if (!results.is_array()) r.fail("results", "expected a list");
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string path = fmt::format("results[{}]", i);
    const json& e = results[i];
    NcclTestsRow row;
    row.index = static_cast<int>(i);
    row.size_bytes = r.number(r.member(e, path, "size"), path + ".size");
    row.count = r.number(r.member(e, path, "count"), path + ".count");
    row.type = r.text(r.member(e, path, "type"), path + ".type");
    row.redop = r.text(r.member(e, path, "redop"), path + ".redop");
    row.root = e.contains("root") ? r.text(e.at("root"), path + ".root") : "";
    row.out_of_place = r.timing(e, path, "out_of_place");
    row.in_place = r.timing(e, path, "in_place");
    log.rows.push_back(std::move(row));
  }
  const json& bounds = r.member(doc, "", "out_of_bounds");
  const double out_of_bounds = r.number(r.member(bounds, "out_of_bounds", "count"), "out_of_bounds.count");
  if (out_of_bounds != 0) {
    r.fail("out_of_bounds.count",
           fmt::format("nccl-tests found {:.0f} out-of-bounds values: the run is broken", out_of_bounds));
  }
  if (doc.contains("average_bus_bandwidth") && doc.at("average_bus_bandwidth").contains("bandwidth")) {
    log.average_busbw_gbps =
        r.number(doc.at("average_bus_bandwidth").at("bandwidth"), "average_bus_bandwidth.bandwidth");
  }
  finish_log(log);
  return log;
}

}  // namespace trainsim::calibrate
