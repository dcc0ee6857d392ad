#include "sim/measured/kineto_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/config/diagnostics.h"
#include "sim/config/loader.h"
#include "sim/measured/kernel_names.h"

namespace trainsim::measured {
namespace {

using nlohmann::json;

constexpr std::string_view kStepPrefix = "ProfilerStep#";

// A GPU activity as the trace records it (times in microseconds).
struct RawActivity {
  size_t name;  // index in Collected::names
  ActivityClass cls;
  int64_t device;
  double ts_us;
  double dur_us;
  std::optional<int64_t> correlation;
};

// A collective or send/receive as PyTorch records it on the host.
struct RawComm {
  std::string kind;  // empty: not one the comparison knows
  int64_t group_size;
  double bytes;
  double ts_us;
};

struct RawStep {
  std::string name;
  double ts_us;
  double dur_us;
};

// What the reader keeps of the trace; everything else is dropped while parsing.
struct Collected {
  std::vector<RawActivity> activities;
  std::vector<RawStep> steps;
  std::vector<RawComm> comms;
  std::unordered_map<int64_t, double> launch_us;  // correlation id -> host time of the launch
  std::vector<std::string> names;                 // of the activities, each once
  std::unordered_map<std::string, size_t> name_index;
  std::optional<int64_t> rank;
  std::optional<int64_t> world_size;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::optional<double> number(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<int64_t> integer(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

[[noreturn]] void fail(const std::string& file, const std::string& message, int line = 0, int column = 0) {
  config::throw_config_error({file, line, column}, "", message);
}

// Bytes per element of a PyTorch dtype name as record_param_comms writes it; 0 when unknown.
double dtype_bytes(const std::string& dtype) {
  static const std::map<std::string, double> kBytes = {{"Float", 4},
                                                       {"Double", 8},
                                                       {"Half", 2},
                                                       {"BFloat16", 2},
                                                       {"Long", 8},
                                                       {"Int", 4},
                                                       {"Short", 2},
                                                       {"Char", 1},
                                                       {"Byte", 1},
                                                       {"Bool", 1},
                                                       {"Float8_e4m3fn", 1},
                                                       {"Float8_e5m2", 1},
                                                       {"Float8_e4m3fnuz", 1},
                                                       {"Float8_e5m2fnuz", 1}};
  const auto it = kBytes.find(dtype);
  return it == kBytes.end() ? 0 : it->second;
}

// The communication call `args` of a record_param_comms event describe, at `ts_us`.
RawComm comm_of(const json& args, double ts_us) {
  const auto text = [&args](const char* key) {
    const auto it = args.find(key);
    return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const double elements =
      std::max(integer(args, "In msg nelems").value_or(0), integer(args, "Out msg nelems").value_or(0));
  const double bytes = elements * dtype_bytes(text("dtype"));
  std::string kind = bytes > 0 || text("Collective name") == "barrier"
                         ? std::string(collective_kind(text("Collective name")))
                         : "";
  const int64_t group = kind == "send" || kind == "recv" ? 2 : integer(args, "Group size").value_or(0);
  if (group <= 0) kind.clear();
  return {kind, group, bytes, ts_us};
}

// Keeps what `event` (a complete trace event of the trace `file`) contributes to `out`.
void collect_event(const json& event, Collected& out, const std::string& file) {
  const auto ph = event.find("ph");
  const auto name_it = event.find("name");
  if (ph == event.end() || !ph->is_string() || *ph != "X" || name_it == event.end() ||
      !name_it->is_string()) {
    return;
  }
  const auto& name = name_it->get_ref<const std::string&>();
  const auto cat_it = event.find("cat");
  const std::string cat =
      cat_it != event.end() && cat_it->is_string() ? lower(cat_it->get<std::string>()) : "";
  const std::optional<double> ts = number(event, "ts");
  const std::optional<double> dur = number(event, "dur");
  if (!ts || !dur) return;
  // Microseconds: a trace spans seconds to hours, its clock counts from boot or from 1970.
  if (*dur < 0 || !(std::abs(*ts) < 1e18) || !(*dur < 1e12)) {
    fail(file,
         fmt::format("event \"{}\": \"ts\" {} or \"dur\" {} (microseconds) is out of range; is the trace "
                     "intact?",
                     name, *ts, *dur));
  }
  static const json kNoArgs = json::object();
  const json& args = event.contains("args") && event["args"].is_object() ? event["args"] : kNoArgs;
  if (name.rfind(kStepPrefix, 0) == 0 && cat != "gpu_user_annotation") {
    out.steps.push_back({name, *ts, *dur});
    return;
  }
  if (name == "record_param_comms" && (cat == "cpu_op" || cat == "operator" || cat == "user_annotation")) {
    out.comms.push_back(comm_of(args, *ts));
    return;
  }
  const bool kernel = cat == "kernel";
  const bool copy = cat == "gpu_memcpy" || cat == "memcpy" || cat == "gpu_memset" || cat == "memset";
  if (kernel || copy) {
    std::optional<int64_t> device = integer(args, "device");
    if (!device) device = integer(event, "pid");
    const ActivityClass cls = kernel                                     ? classify_kernel(name)
                              : (cat == "gpu_memset" || cat == "memset") ? ActivityClass::kMemory
                                                                         : classify_copy(name);
    const auto [it, added] = out.name_index.emplace(name, out.names.size());
    if (added) out.names.push_back(name);
    out.activities.push_back({it->second, cls, device.value_or(0), *ts, *dur, integer(args, "correlation")});
    return;
  }
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime" || cat == "driver") {
    if (const std::optional<int64_t> correlation = integer(args, "correlation")) {
      out.launch_us[*correlation] = *ts;
    }
  }
}

Collected parse(std::istream& in, const std::string& file) {
  if (in.peek() == 0x1f) {
    fail(file,
         "the trace is gzip-compressed (tensorboard_trace_handler writes .json.gz); decompress it "
         "first: gunzip -k FILE");
  }
  Collected out;
  const json::parser_callback_t keep = [&out, &file](int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event != json::parse_event_t::object_end || !parsed.contains("ph")) return true;
    collect_event(parsed, out, file);
    return false;  // the event itself is not kept: traces run to millions of them
  };
  json document;
  try {
    document = json::parse(in, keep);
  } catch (const json::parse_error& e) {
    // nlohmann's message reads "[json.exception.parse_error.101] parse error at line L, column C: ..."
    // (read without std::regex, whose recursion overflows the stack on the long excerpts it quotes).
    const std::string what = e.what();
    const size_t at = what.find("at line ");
    int line = 0;
    int column = 0;
    int consumed = 0;
    if (at != std::string::npos &&
        std::sscanf(what.c_str() + at, "at line %d, column %d: %n", &line, &column, &consumed) == 2 &&
        consumed > 0) {
      fail(file, "not valid JSON: " + what.substr(at + static_cast<size_t>(consumed)), line, column);
    }
    fail(file, fmt::format("not valid JSON: {}", what));
  } catch (const json::exception& e) {  // a number beyond double's range
    fail(file, fmt::format("not valid JSON: {}", e.what()));
  }
  if (!document.is_object() && !document.is_array()) {
    fail(file, "not a Chrome trace: expected an object with \"traceEvents\" or an array of events");
  }
  if (document.is_object()) {
    if (!document.contains("traceEvents")) {
      fail(file, "not a Chrome trace: no \"traceEvents\" (export it with prof.export_chrome_trace(FILE))");
    }
    if (const auto info = document.find("distributedInfo"); info != document.end() && info->is_object()) {
      out.rank = integer(*info, "rank");
      out.world_size = integer(*info, "world_size");
    }
  }
  return out;
}

// The device with the most GPU time.
int64_t busiest_device(const std::vector<RawActivity>& activities) {
  std::map<int64_t, double> busy;
  for (const RawActivity& a : activities) busy[a.device] += a.dur_us;
  return std::max_element(busy.begin(), busy.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

}  // namespace

MeasuredTrace read_kineto_trace(const std::filesystem::path& path, const TraceOptions& options) {
  const std::string name = config::display_name(path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    fail(name, std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(name, "cannot read the file (permission denied?)");
  return read_kineto_trace(in, name, options);
}

MeasuredTrace read_kineto_trace(std::istream& in, const std::string& file, const TraceOptions& options) {
  Collected c = parse(in, file);
  if (c.activities.empty()) {
    fail(file,
         "the trace holds no GPU activity (kernels, copies); profile with activities=[ProfilerActivity.CPU, "
         "ProfilerActivity.CUDA]");
  }
  if (c.steps.empty()) {
    fail(file,
         "the trace holds no ProfilerStep#N span; call prof.step() once per training iteration while "
         "profiling");
  }
  MeasuredTrace t;
  t.rank = c.rank;
  t.world_size = c.world_size;
  std::vector<int64_t> devices;
  for (const RawActivity& a : c.activities) devices.push_back(a.device);
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  t.device = options.device.value_or(busiest_device(c.activities));
  if (!std::binary_search(devices.begin(), devices.end(), t.device)) {
    fail(file, fmt::format("the trace holds no activity of device {}; its devices are {}", t.device,
                           fmt::join(devices, ", ")));
  }
  for (const int64_t d : devices) {
    if (d != t.device) t.other_devices.push_back(d);
  }

  std::sort(c.steps.begin(), c.steps.end(),
            [](const RawStep& a, const RawStep& b) { return a.ts_us < b.ts_us; });
  if (static_cast<int64_t>(c.steps.size()) <= options.skip_steps) {
    fail(file,
         fmt::format("the trace holds {} step(s), and {} are to be skipped; profile more steps or skip fewer",
                     c.steps.size(), options.skip_steps));
  }
  // The step whose host span holds `ts_us`, or -1.
  const auto step_at = [&c](double ts_us) -> int64_t {
    const auto it = std::upper_bound(c.steps.begin(), c.steps.end(), ts_us,
                                     [](double time_us, const RawStep& s) { return time_us < s.ts_us; });
    if (it == c.steps.begin()) return -1;
    const RawStep& s = *std::prev(it);
    return ts_us < s.ts_us + s.dur_us ? std::prev(it) - c.steps.begin() : -1;
  };
  std::vector<std::vector<Activity>> by_step(c.steps.size());
  std::vector<KernelTotal> by_name(c.names.size());
  for (const RawActivity& a : c.activities) {
    if (a.device != t.device) continue;
    const auto launch = a.correlation ? c.launch_us.find(*a.correlation) : c.launch_us.end();
    const int64_t step = step_at(launch != c.launch_us.end() ? launch->second : a.ts_us);
    if (step < 0) {
      ++t.unattributed;
      continue;
    }
    by_step[static_cast<size_t>(step)].push_back({a.cls, a.ts_us * 1e-6, (a.ts_us + a.dur_us) * 1e-6});
    if (step >= options.skip_steps) {
      KernelTotal& k = by_name[a.name];
      k.cls = a.cls;
      k.time_s += a.dur_us * 1e-6;
      k.count += 1;
    }
  }
  std::vector<double> first_s(c.steps.size());
  std::vector<double> last_s(c.steps.size());
  for (size_t s = 0; s < c.steps.size(); ++s) {
    if (by_step[s].empty()) {
      if (static_cast<int64_t>(s) < options.skip_steps) continue;
      fail(file,
           fmt::format("step {} launched nothing on device {}: is it the device that trained (--device)?",
                       c.steps[s].name, t.device));
    }
    first_s[s] = last_s[s] = by_step[s].front().begin_s;
    for (const Activity& a : by_step[s]) {
      first_s[s] = std::min(first_s[s], a.begin_s);
      last_s[s] = std::max(last_s[s], a.end_s);
    }
  }
  t.skipped_steps = options.skip_steps;
  for (size_t s = static_cast<size_t>(options.skip_steps); s < c.steps.size(); ++s) {
    const bool last = s + 1 == c.steps.size();
    const double end = last ? std::max(first_s[s] + c.steps[s].dur_us * 1e-6, last_s[s]) : first_s[s + 1];
    t.step_names.push_back(c.steps[s].name);
    t.steps.push_back(profile_step(by_step[s], first_s[s], std::max(end, first_s[s])));
  }
  const auto kept = static_cast<double>(t.steps.size());
  for (size_t n = 0; n < by_name.size(); ++n) {
    KernelTotal& k = by_name[n];
    if (k.count == 0) continue;
    k.name = std::move(c.names[n]);
    k.time_s /= kept;
    k.count /= kept;
    t.kernels.push_back(std::move(k));
  }
  std::stable_sort(t.kernels.begin(), t.kernels.end(),
                   [](const KernelTotal& a, const KernelTotal& b) { return a.time_s > b.time_s; });
  std::map<std::pair<std::string, int64_t>, CommTotal> comms;
  for (const RawComm& call : c.comms) {
    if (step_at(call.ts_us) < options.skip_steps) continue;  // outside every step, or skipped
    if (call.kind.empty()) {
      ++t.comms_unknown;
      continue;
    }
    CommTotal& total = comms[{call.kind, call.group_size}];
    total.kind = call.kind;
    total.group_size = call.group_size;
    total.calls += 1 / kept;
    total.bytes += call.bytes / kept;
  }
  for (auto& [key, total] : comms) t.comms.push_back(std::move(total));
  return t;
}

}  // namespace trainsim::measured
