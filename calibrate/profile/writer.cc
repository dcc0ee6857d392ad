#include "calibrate/profile/writer.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "calibrate/profile/content_hash.h"
#include "sim/common/atomic_file.h"
#include "sim/config/units.h"

namespace trainsim::calibrate {
namespace {

using config::QuantityKind;

// A YAML double-quoted scalar. Control characters (which a log copied from a terminal may carry
// into a device name) are escaped: YAML does not allow them raw.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
    } else if ((c >= 0 && c < 0x20) || c == 0x7f) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Keys are written bare when they are plain identifiers and dotted paths, quoted otherwise.
std::string key(const std::string& text) {
  for (const char c : text) {
    const bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    if (!plain) return quoted(text);
  }
  return text;
}

std::string q(double value, QuantityKind kind) { return config::format_quantity(value, kind); }

std::string number(double value) { return fmt::format("{}", value); }

// The spread keys of a sample row that are recorded (", min: 9.1us, p90: 10.9us, repetitions: 8"),
// after its time; "" when none is.
std::string spread_keys(const config::SampleSpread& s) {
  std::string keys;
  if (s.min_s > 0) keys += ", min: " + q(s.min_s, QuantityKind::kDuration);
  if (s.p90_s > 0) keys += ", p90: " + q(s.p90_s, QuantityKind::kDuration);
  if (s.repetitions > 0) keys += fmt::format(", repetitions: {}", s.repetitions);
  return keys;
}

// ", algorithm: ring" for a collective row timed with one NCCL algorithm; "" for NCCL's own choice.
std::string algorithm_key(const std::optional<config::CollectiveAlgorithm>& algorithm) {
  return algorithm ? fmt::format(", algorithm: {}", config::to_string(*algorithm)) : "";
}

void row(std::ostream& out, const std::string& map, const std::vector<std::string>& comments, size_t index) {
  out << "  - {" << map << "}";
  if (index < comments.size() && !comments[index].empty()) out << "  # " << comments[index];
  out << '\n';
}

void write_gpu(std::ostream& out, const config::GpuSpec& g) {
  out << "gpu:\n  name: " << quoted(g.name) << '\n';
  if (g.sm_count > 0) out << "  sm_count: " << g.sm_count << '\n';
  if (g.clock_hz > 0) out << "  clock: " << q(g.clock_hz, QuantityKind::kFrequency) << '\n';
  out << "  peak_flops:\n";
  for (const auto& [dtype, name] : config::EnumNames<config::Dtype>::kNames) {
    const auto it = g.peak_flops_per_s.find(dtype);
    if (it != g.peak_flops_per_s.end())
      out << "    " << name << ": " << q(it->second, QuantityKind::kFlopRate) << '\n';
  }
  out << "  hbm:\n    capacity: " << q(g.hbm_capacity_bytes, QuantityKind::kBytes) << '\n';
  out << "    bandwidth: " << q(g.hbm_bandwidth_bytes_per_s, QuantityKind::kBandwidth) << '\n';
}

void write_host(std::ostream& out, const config::HardwareProfile& p) {
  const config::HostLink& h = p.host_link;
  out << "host_link:\n";
  if (h.pcie_generation > 0) out << "  pcie_generation: " << h.pcie_generation << '\n';
  out << "  h2d_bandwidth: " << q(h.h2d_bandwidth_bytes_per_s, QuantityKind::kBandwidth) << '\n';
  out << "  d2h_bandwidth: " << q(h.d2h_bandwidth_bytes_per_s, QuantityKind::kBandwidth) << '\n';
  if (h.latency_s > 0) out << "  latency: " << q(h.latency_s, QuantityKind::kDuration) << '\n';
  if (p.host_memory_bytes > 0) out << "host_memory: " << q(p.host_memory_bytes, QuantityKind::kBytes) << '\n';
}

void write_compute(std::ostream& out, const config::ComputeModel& c) {
  std::ostringstream body;
  const auto fraction = [&](const char* name, double value) {
    if (value > 0) body << "  " << name << ": " << number(value) << '\n';
  };
  const auto duration = [&](const char* name, double value) {
    if (value > 0) body << "  " << name << ": " << q(value, QuantityKind::kDuration) << '\n';
  };
  fraction("gemm_efficiency", c.gemm_efficiency);
  fraction("gemm_efficiency_fp8", c.gemm_efficiency_fp8);
  fraction("attention_forward_efficiency", c.attention_forward_efficiency);
  fraction("attention_backward_efficiency", c.attention_backward_efficiency);
  fraction("memory_efficiency", c.memory_efficiency);
  duration("kernel_launch", c.kernel_launch_s);
  duration("host_sync", c.host_sync_s);
  fraction("comm_compute_slowdown", c.comm_compute_slowdown);
  if (c.attention_kernel) body << "  attention_kernel: " << config::to_string(*c.attention_kernel) << '\n';
  if (!body.str().empty()) out << "compute:\n" << body.str();
}

// The section when the profile has one; a key at 0 (the same as left out) is not written.
void write_runtime_memory(std::ostream& out, const std::optional<config::RuntimeMemory>& r) {
  if (!r) return;
  std::ostringstream body;
  const auto bytes = [&](const char* name, double value) {
    if (value > 0) body << "  " << name << ": " << q(value, QuantityKind::kBytes) << '\n';
  };
  bytes("context", r->context_bytes);
  bytes("collective_communicator", r->collective_communicator_bytes);
  bytes("p2p_peer_in_node", r->p2p_peer_in_node_bytes);
  bytes("p2p_peer_across_nodes", r->p2p_peer_across_nodes_bytes);
  if (body.str().empty()) {
    out << "runtime_memory: {}\n";
  } else {
    out << "runtime_memory:\n" << body.str();
  }
}

// The section when the profile has one.
void write_power(std::ostream& out, const std::optional<config::GpuPower>& p) {
  if (!p) return;
  out << "power:\n";
  for (const auto& [name, watts] :
       {std::pair{"limit", p->limit_w}, std::pair{"idle", p->idle_w}, std::pair{"compute", p->compute_w},
        std::pair{"memory", p->memory_w}, std::pair{"communication", p->communication_w}}) {
    out << "  " << name << ": " << q(watts, QuantityKind::kPower) << '\n';
  }
}

void write_tables(std::ostream& out, const ProfileDocument& doc) {
  const config::HardwareProfile& p = doc.profile;
  const auto dtype = [](config::Dtype d) { return std::string(config::to_string(d)); };
  if (!p.gemm_samples.empty()) {
    out << "gemm_samples:\n";
    for (size_t i = 0; i < p.gemm_samples.size(); ++i) {
      const config::GemmSample& s = p.gemm_samples[i];
      row(out,
          fmt::format("dtype: {}, m: {}, n: {}, k: {}, time: {}{}", dtype(s.dtype), s.m, s.n, s.k,
                      q(s.duration_s, QuantityKind::kDuration), spread_keys(s.spread)),
          doc.gemm_comments, i);
    }
  }
  if (!p.attention_samples.empty()) {
    out << "attention_samples:\n";
    for (size_t i = 0; i < p.attention_samples.size(); ++i) {
      const config::AttentionSample& s = p.attention_samples[i];
      row(out,
          fmt::format(
              "pass: {}, causal: {}, dtype: {}, batch: {}, heads: {}, kv_heads: {}, q_len: {}, kv_len: {}, "
              "head_dim: {}, time: {}{}",
              config::to_string(s.pass), s.causal, dtype(s.dtype), s.batch, s.heads, s.kv_heads, s.q_len,
              s.kv_len, s.head_dim, q(s.duration_s, QuantityKind::kDuration), spread_keys(s.spread)),
          doc.attention_comments, i);
    }
  }
  if (!p.collective_samples.empty()) {
    out << "collective_samples:\n";
    for (size_t i = 0; i < p.collective_samples.size(); ++i) {
      const config::CollectiveSample& s = p.collective_samples[i];
      row(out,
          fmt::format("kind: {}, ranks: {}, nodes: {}, bytes: {}, time: {}{}{}", config::to_string(s.kind),
                      s.ranks, s.nodes, q(s.bytes, QuantityKind::kBytes),
                      q(s.duration_s, QuantityKind::kDuration), spread_keys(s.spread),
                      algorithm_key(s.algorithm)),
          doc.collective_sample_comments, i);
    }
  }
  if (!p.collective_fits.empty()) {
    out << "collective_fits:\n";
    for (size_t i = 0; i < p.collective_fits.size(); ++i) {
      const config::CollectiveFit& f = p.collective_fits[i];
      row(out,
          fmt::format("kind: {}, ranks: {}, nodes: {}, min_bytes: {}, max_bytes: {}, latency: {}, "
                      "bus_bandwidth: {}{}",
                      config::to_string(f.kind), f.ranks, f.nodes, q(f.min_bytes, QuantityKind::kBytes),
                      q(f.max_bytes, QuantityKind::kBytes), q(f.latency_s, QuantityKind::kDuration),
                      q(f.bus_bandwidth_bytes_per_s, QuantityKind::kBandwidth), algorithm_key(f.algorithm)),
          doc.collective_fit_comments, i);
    }
  }
  if (!p.copy_samples.empty()) {
    out << "copy_samples:\n";
    for (size_t i = 0; i < p.copy_samples.size(); ++i) {
      const config::CopySample& s = p.copy_samples[i];
      row(out,
          fmt::format("direction: {}, concurrent_gpus: {}, bytes: {}, time: {}{}",
                      config::to_string(s.direction), s.concurrent_gpus, q(s.bytes, QuantityKind::kBytes),
                      q(s.duration_s, QuantityKind::kDuration), spread_keys(s.spread)),
          doc.copy_comments, i);
    }
  }
}

// A map of the non-empty `fields` (name, text), indented under `name`; nothing when all are empty.
void write_string_map(std::ostream& out, const char* name,
                      const std::vector<std::pair<const char*, std::string>>& fields) {
  std::ostringstream body;
  for (const auto& [field, text] : fields) {
    if (!text.empty()) body << "    " << field << ": " << quoted(text) << '\n';
  }
  if (!body.str().empty()) out << "  " << name << ":\n" << body.str();
}

void write_provenance(std::ostream& out, const config::Provenance& p) {
  out << "provenance:\n  kind: " << config::to_string(p.kind) << '\n';
  if (!p.date.empty()) out << "  date: " << quoted(p.date) << '\n';
  if (!p.tool_version.empty()) out << "  tool_version: " << quoted(p.tool_version) << '\n';
  if (!p.command.empty()) out << "  command: " << quoted(p.command) << '\n';
  const config::SoftwareVersions& s = p.software;
  write_string_map(out, "software",
                   {{"driver", s.driver},
                    {"cuda_runtime", s.cuda_runtime},
                    {"blas", s.blas},
                    {"collectives", s.collectives},
                    {"compiler", s.compiler},
                    {"attention_kernel", s.attention_kernel}});
  write_string_map(out, "host", {{"cpu", p.host.cpu}, {"name", p.host.name}});
  const bool has_control = std::any_of(p.notes.begin(), p.notes.end(),
                                       [](char c) { return (c >= 0 && c < 0x20 && c != '\n') || c == 0x7f; });
  if (has_control) {  // a block scalar cannot hold them; a quoted one escapes them
    out << "  notes: " << quoted(p.notes) << '\n';
  } else if (!p.notes.empty()) {
    // A literal block with explicit indentation (the first line may start with spaces), keeping or
    // stripping the final line break as the text has it.
    const bool final_break = p.notes.back() == '\n';
    out << "  notes: |2" << (final_break ? "+" : "-") << '\n';
    size_t begin = 0;
    while (begin < p.notes.size()) {
      size_t end = p.notes.find('\n', begin);
      if (end == std::string::npos) end = p.notes.size();
      const std::string line = p.notes.substr(begin, end - begin);
      out << (line.empty() ? "" : "    " + line) << '\n';
      begin = end + 1;
    }
  }
}

}  // namespace

std::string profile_yaml(const ProfileDocument& doc) {
  const config::HardwareProfile& p = doc.profile;
  std::ostringstream out;
  out << "schema_version: 1\nname: " << quoted(p.name) << '\n';
  write_gpu(out, p.gpu);
  write_host(out, p);
  write_compute(out, p.compute);
  write_runtime_memory(out, p.runtime_memory);
  write_power(out, p.power);
  write_tables(out, doc);
  if (p.cost.price_per_gpu_hour_usd) {
    out << "cost:\n  price_per_gpu_hour: " << number(*p.cost.price_per_gpu_hour_usd) << "USD\n";
  }
  write_provenance(out, p.provenance);
  out << "sources:\n";
  for (const auto& [path, citation] : p.sources) out << "  " << key(path) << ": " << quoted(citation) << '\n';
  return out.str();
}

std::string profile_file_text(const ProfileDocument& doc) {
  std::string body;
  for (const std::string& line : doc.header) body += line.empty() ? "#\n" : "# " + line + "\n";
  body += profile_yaml(doc);
  return with_content_hash(body);
}

void write_profile(const std::filesystem::path& path, const ProfileDocument& doc, bool replace) {
  std::error_code ec;
  if (!replace && std::filesystem::exists(path, ec)) {
    throw ProfileExistsError(fmt::format(
        "{} exists; hardware profiles are immutable. Write to another file, or pass --force to replace it",
        path.string()));
  }
  write_file_atomically(path, profile_file_text(doc), FileMode::kReadOnly);
}

}  // namespace trainsim::calibrate
