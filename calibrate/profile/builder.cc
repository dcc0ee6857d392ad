#include "calibrate/profile/builder.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "calibrate/fit/collective_fits.h"
#include "sim/config/units.h"

namespace trainsim::calibrate {
namespace {

using config::Dtype;
using config::QuantityKind;

std::string quantity(double value, QuantityKind kind) { return config::format_quantity(value, kind); }

std::string spread(const Summary& s) {
  return fmt::format("median of {} (min {}, p90 {}, cv {:.1f}%)", s.repetitions,
                     quantity(round_significant(s.min_s, 3), QuantityKind::kDuration),
                     quantity(round_significant(s.p90_s, 3), QuantityKind::kDuration), 100.0 * s.cv);
}

// What a sample row keeps of the spread of its repetitions, to the precision of its median.
config::SampleSpread sample_spread(const Summary& s) {
  return {round_significant(s.min_s), round_significant(s.p90_s), s.repetitions};
}

// The comment after a sample row: what its keys do not hold, the coefficient of variation and, when
// given, the rate the median stands for ("cv 7.2%, 226TFLOP/s").
std::string sample_comment(const Summary& s, const std::string& rate = "") {
  return fmt::format("cv {:.1f}%{}", 100.0 * s.cv, rate.empty() ? "" : ", " + rate);
}

std::string rounded_rate(double value, QuantityKind kind) {
  return quantity(round_significant(value, 3), kind);
}

struct BestRate {
  double flops_per_s = 0;
  std::string where;
};

// What the profile is built from, with the words its sources use.
class Builder {
 public:
  Builder(const Measurements& m, const BuildOptions& o)
      : m_(m), o_(o), cpu_(m.facts.backend == "cpu"), profile_(doc_.profile) {}

  ProfileDocument build() {
    profile_.name = o_.name;
    gpu();
    tables();
    host_link();
    compute();
    runtime_memory();
    power();
    provenance();
    return std::move(doc_);
  }

 private:
  void source(const std::string& key, const std::string& text) { profile_.sources[key] = text; }
  void note(const std::string& text) { notes_.push_back(text); }
  void warn(const std::string& text) {
    doc_.warnings.push_back(text);
    notes_.push_back("warning: " + text);
  }
  std::string from_base(const std::string& key) const {
    return fmt::format("from {}: {}", o_.base_label, o_.base->source_of(key));
  }

  void gpu() {
    const DeviceFacts& f = m_.facts;
    config::GpuSpec& g = profile_.gpu;
    g.name = f.device_name;
    source("gpu.name",
           cpu_ ? "queried: /proc/cpuinfo model name (the cpu device runs the CPU references of kernels/)"
                : "queried: cudaGetDeviceProperties of device 0");
    if (f.multiprocessors > 0) {
      g.sm_count = f.multiprocessors;
      source("gpu.sm_count", cpu_ ? "queried: logical CPUs (std::thread::hardware_concurrency)"
                                  : "queried: cudaGetDeviceProperties multiProcessorCount");
    }
    if (f.clock_hz > 0) {
      g.clock_hz = round_significant(f.clock_hz);
      source("gpu.clock", cpu_ ? "queried: cpufreq cpuinfo_max_freq of cpu0"
                               : "queried: cudaDevAttrClockRate (maximum SM clock)");
    }
    g.hbm_capacity_bytes = f.memory_bytes;
    source("gpu.hbm.capacity",
           cpu_ ? "queried: /proc/meminfo MemTotal (the cpu device's memory is host memory)"
                : "queried: cudaGetDeviceProperties totalGlobalMem");
    for (const auto& s : m_.gemms) {
      const double rate = s.c.flops() / s.summary.median_s;
      BestRate& best = best_gemm_[s.c.dtype];
      if (rate > best.flops_per_s) best = {rate, fmt::format("{}x{}x{}", s.c.m, s.c.n, s.c.k)};
    }
    if (best_gemm_.empty()) throw std::invalid_argument("the calibration measured no GEMM");
    if (o_.base) {
      for (const auto& [dtype, peak] : o_.base->gpu.peak_flops_per_s) {
        g.peak_flops_per_s[dtype] = peak;
        const std::string key = fmt::format("gpu.peak_flops.{}", config::to_string(dtype));
        source(key, from_base(key));
        const auto it = best_gemm_.find(dtype);
        if (it != best_gemm_.end() && it->second.flops_per_s > peak) {
          warn(fmt::format(
              "the measured {} GEMM rate {} exceeds the peak {} of {}: is it the profile of this GPU?",
              config::to_string(dtype),
              quantity(round_significant(it->second.flops_per_s), QuantityKind::kFlopRate),
              quantity(peak, QuantityKind::kFlopRate), o_.base_label));
        }
      }
      g.hbm_bandwidth_bytes_per_s = o_.base->gpu.hbm_bandwidth_bytes_per_s;
      source("gpu.hbm.bandwidth", from_base("gpu.hbm.bandwidth"));
    } else {
      for (const auto& [dtype, best] : best_gemm_) {
        g.peak_flops_per_s[dtype] = round_significant(best.flops_per_s);
        source(fmt::format("gpu.peak_flops.{}", config::to_string(dtype)),
               fmt::format(
                   "measured: best {} GEMM rate of this run ({}), not a datasheet peak (pass --base for one)",
                   config::to_string(dtype), best.where));
      }
      g.hbm_bandwidth_bytes_per_s = round_significant(device_copy_rate());
      source("gpu.hbm.bandwidth",
             fmt::format(
                 "measured: {} rate at the largest size, bytes read plus bytes written, not a datasheet peak",
                 cpu_ ? "host memcpy" : "device-to-device copy"));
    }
  }

  // The rate of the largest device copy, bytes read plus written: smaller ones can run from the
  // last-level cache (an H200's 1-16 MiB copies beat its HBM datasheet bandwidth).
  double device_copy_rate() const {
    const DeviceCopyMeasurement* largest = nullptr;
    for (const DeviceCopyMeasurement& d : m_.device_copies)
      if (largest == nullptr || d.bytes > largest->bytes) largest = &d;
    if (largest == nullptr || !(largest->summary.median_s > 0))
      throw std::invalid_argument("the calibration measured no device copy");
    return 2.0 * largest->bytes / largest->summary.median_s;
  }

  // Single-GPU copies: the bandwidth is the rate achieved at the largest size (where the latency no
  // longer matters), the latency what the smallest copy takes beyond its bytes at that rate.
  std::pair<double, double> copy_model(config::CopyDirection direction) const {
    const Measured<CopyCase>* smallest = nullptr;
    const Measured<CopyCase>* largest = nullptr;
    for (const auto& s : m_.copies) {
      if (s.c.direction != direction || s.c.concurrent != 1) continue;
      if (smallest == nullptr || s.c.bytes < smallest->c.bytes) smallest = &s;
      if (largest == nullptr || s.c.bytes > largest->c.bytes) largest = &s;
    }
    if (smallest == nullptr || smallest == largest) {
      throw std::invalid_argument(fmt::format(
          "the calibration measured fewer than two {} copy sizes on one GPU", config::to_string(direction)));
    }
    const double bandwidth = largest->c.bytes / largest->summary.median_s;
    return {bandwidth, std::max(0.0, smallest->summary.median_s - smallest->c.bytes / bandwidth)};
  }

  void host_link() {
    config::HostLink& h = profile_.host_link;
    const auto [h2d, h2d_latency] = copy_model(config::CopyDirection::kHostToDevice);
    const auto [d2h, d2h_latency] = copy_model(config::CopyDirection::kDeviceToHost);
    h.h2d_bandwidth_bytes_per_s = round_significant(h2d);
    h.d2h_bandwidth_bytes_per_s = round_significant(d2h);
    h.latency_s = round_significant(0.5 * (h2d_latency + d2h_latency));
    const std::string what = cpu_ ? "memcpy between two host buffers (the cpu device's host link)"
                                  : "pinned host<->device copies (cudaMemcpyAsync) on one GPU";
    source("host_link.h2d_bandwidth",
           fmt::format("measured: {}, the rate at the largest size of copy_samples", what));
    source("host_link.d2h_bandwidth", "measured: as h2d_bandwidth, device to host");
    if (h.latency_s > 0) {
      source("host_link.latency",
             "measured: the smallest copy's time beyond its bytes at that rate, mean of both directions");
    }
    if (m_.facts.pcie_generation > 0) {
      h.pcie_generation = m_.facts.pcie_generation;
      source("host_link.pcie_generation",
             "queried: maximum PCIe link speed of device 0 (sysfs max_link_speed)");
    }
    if (m_.facts.host_memory_bytes > 0) {
      profile_.host_memory_bytes = m_.facts.host_memory_bytes;
      source("host_memory", "queried: /proc/meminfo MemTotal");
    }
  }

  // efficiency = measured / peak, at most 1 (the schema's range); a clamp is reported.
  double fraction(double measured, double peak, const std::string& what) {
    const double f = measured / peak;
    if (f > 1.0) {
      warn(fmt::format("{}: measured {:.4g} of peak; written as 1", what, f));
      return 1.0;
    }
    return round_significant(f);
  }

  void compute() {
    config::ComputeModel& c = profile_.compute;
    const config::GpuSpec& g = profile_.gpu;
    Dtype primary = best_gemm_.begin()->first;
    for (const Dtype d : {Dtype::kFp32, Dtype::kBf16}) {
      if (best_gemm_.count(d) != 0) primary = d;
    }
    const auto peak = g.peak_flops_per_s.find(primary);
    if (!o_.base) {
      c.gemm_efficiency = 1.0;
      source("compute.gemm_efficiency",
             fmt::format(
                 "measured: gpu.peak_flops.{} is itself the best measured GEMM rate, so the fraction is 1",
                 config::to_string(primary)));
    } else if (peak != g.peak_flops_per_s.end()) {
      const BestRate& best = best_gemm_[primary];
      c.gemm_efficiency = fraction(best.flops_per_s, peak->second, "gemm_efficiency");
      source("compute.gemm_efficiency",
             fmt::format("measured: best {} GEMM rate {} ({}) / gpu.peak_flops.{}; random inputs, each shape "
                         "timed after 250 ms back to back on a GPU: the sustained rate under its power limit",
                         config::to_string(primary),
                         quantity(round_significant(best.flops_per_s), QuantityKind::kFlopRate), best.where,
                         config::to_string(primary)));
    }
    const auto fp8_peak = g.peak_flops_per_s.find(Dtype::kFp8);
    if (primary != Dtype::kFp8 && best_gemm_.count(Dtype::kFp8) != 0 &&
        fp8_peak != g.peak_flops_per_s.end()) {
      if (!o_.base) {
        c.gemm_efficiency_fp8 = 1.0;
        source(
            "compute.gemm_efficiency_fp8",
            "measured: gpu.peak_flops.fp8 is itself the best measured fp8 GEMM rate, so the fraction is 1");
      } else {
        const BestRate& best = best_gemm_[Dtype::kFp8];
        c.gemm_efficiency_fp8 = fraction(best.flops_per_s, fp8_peak->second, "gemm_efficiency_fp8");
        source(
            "compute.gemm_efficiency_fp8",
            fmt::format("measured: best fp8 GEMM rate {} ({}) / gpu.peak_flops.fp8",
                        quantity(round_significant(best.flops_per_s), QuantityKind::kFlopRate), best.where));
      }
    }
    for (const config::AttentionPass pass :
         {config::AttentionPass::kForward, config::AttentionPass::kBackward}) {
      double best = 0;
      std::string where;
      for (const auto& s : m_.attentions) {
        if (s.c.pass != pass) continue;
        const auto p = g.peak_flops_per_s.find(s.c.dtype);
        if (p == g.peak_flops_per_s.end()) continue;
        const double f = s.c.flops() / s.summary.median_s / p->second;
        if (f > best) {
          best = f;
          where = describe(s.c);
        }
      }
      if (best <= 0) continue;
      const bool forward = pass == config::AttentionPass::kForward;
      const std::string key = forward ? "attention_forward_efficiency" : "attention_backward_efficiency";
      (forward ? c.attention_forward_efficiency : c.attention_backward_efficiency) = fraction(best, 1.0, key);
      source("compute." + key,
             fmt::format("measured: best fraction of the dtype's peak over attention_samples ({})", where));
    }
    // The attention rates describe the kernel that was timed (the CPU references have no tiling).
    for (const auto& [kernel, name] : config::EnumNames<config::FusedAttentionKernel>::kNames) {
      if (m_.attentions.empty() || name != m_.facts.attention_kernel) continue;
      c.attention_kernel = kernel;
      source("compute.attention_kernel", "measured: the kernel attention_samples timed (--attention-kernel)");
    }
    c.memory_efficiency =
        o_.base ? fraction(device_copy_rate(), g.hbm_bandwidth_bytes_per_s, "memory_efficiency") : 1.0;
    source("compute.memory_efficiency",
           o_.base ? fmt::format("measured: {} rate at the largest size (read + write) / gpu.hbm.bandwidth",
                                 cpu_ ? "memcpy" : "device-to-device copy")
                   : "measured: gpu.hbm.bandwidth is itself the measured copy rate, so the fraction is 1");
    c.kernel_launch_s = round_significant(m_.launch.median_s);
    source("compute.kernel_launch",
           cpu_ ? "measured: one call of the smallest CPU reference kernel (1x1x1 GEMM), " + spread(m_.launch)
                : "measured: back-to-back launches of an empty kernel, host clock, " + spread(m_.launch));
    if (m_.host_sync.median_s > 0) {
      c.host_sync_s = round_significant(m_.host_sync.median_s);
      source("compute.host_sync",
             cpu_ ? "measured: handing an empty task to a worker thread and waiting for it, " +
                        spread(m_.host_sync)
                  : "measured: launch + cudaStreamSynchronize round trip minus the launch, " +
                        spread(m_.host_sync));
    }
    const double slowdown = m_.interference_concurrent.median_s / m_.interference_alone.median_s - 1.0;
    const std::string setup =
        fmt::format("{} alone {} vs during back-to-back {}", describe(m_.interference_gemm),
                    quantity(round_significant(m_.interference_alone.median_s), QuantityKind::kDuration),
                    describe(m_.interference_collective));
    if (slowdown <= 0) {
      note("interference: no measurable compute slowdown (" + setup + ")");
    } else {
      c.comm_compute_slowdown = slowdown > 1.0 ? 1.0 : round_significant(slowdown, 3);
      if (slowdown > 1.0)
        warn(fmt::format("comm_compute_slowdown measured {:.3g}, above the schema's 1; written as 1",
                         slowdown));
      source("compute.comm_compute_slowdown", "measured: " + setup);
    }
  }

  void tables() {
    config::HardwareProfile& p = profile_;
    const std::string timer = cpu_ ? "std::chrono steady_clock" : "CUDA events";
    for (const auto& s : m_.gemms) {
      p.gemm_samples.push_back(
          {s.c.dtype, s.c.m, s.c.n, s.c.k, round_significant(s.summary.median_s), sample_spread(s.summary)});
      doc_.gemm_comments.push_back(
          sample_comment(s.summary, rounded_rate(s.c.flops() / s.summary.median_s, QuantityKind::kFlopRate)));
    }
    if (!p.gemm_samples.empty()) {
      source("gemm_samples", fmt::format("measured: {}, {}, median of {} repetitions after {} warm-up runs",
                                         cpu_ ? "kernels/reference GEMM (D = A·B, no transposes)"
                                              : "cuBLASLt through kernels/gemm (D = X·Wᵀ)",
                                         timer, m_.compute_policy.repetitions, m_.compute_policy.warmup));
    }
    for (const auto& s : m_.attentions) {
      const AttentionCase& c = s.c;
      p.attention_samples.push_back({c.pass, c.causal, c.dtype, c.batch, c.heads, c.kv_heads, c.q_len,
                                     c.kv_len, c.head_dim, round_significant(s.summary.median_s),
                                     sample_spread(s.summary)});
      doc_.attention_comments.push_back(
          sample_comment(s.summary, rounded_rate(c.flops() / s.summary.median_s, QuantityKind::kFlopRate)));
    }
    if (!p.attention_samples.empty()) {
      source("attention_samples",
             fmt::format("measured: {}, {}",
                         cpu_ ? "kernels/reference attention (fp32)"
                              : "kernels/attention FPDT block kernels (flash-attn layout)",
                         timer));
    }
    for (const auto& s : m_.collectives) {
      p.collective_samples.push_back({.kind = s.c.kind,
                                      .ranks = s.c.ranks,
                                      .nodes = 1,
                                      .bytes = s.c.bytes,
                                      .duration_s = round_significant(s.summary.median_s),
                                      .spread = sample_spread(s.summary),
                                      .algorithm = std::nullopt});
      doc_.collective_sample_comments.push_back(sample_comment(s.summary));
    }
    if (!p.collective_samples.empty()) {
      source(
          "collective_samples",
          cpu_ ? "measured: shared-memory collectives between the worker threads standing for the devices "
                 "(the cpu device's intra-node tier), float sums, std::chrono"
               : "measured: NCCL through kernels/nccl on the GPUs of this node, float sums, CUDA events (the "
                 "slowest rank)");
      std::vector<std::string> fit_notes;
      for (const FittedCollective& f : fit_collectives(p.collective_samples, &fit_notes)) {
        config::CollectiveFit fit = f.fit;
        fit.min_bytes = std::round(fit.min_bytes);
        fit.max_bytes = std::round(fit.max_bytes);
        fit.latency_s = round_significant(fit.latency_s);
        fit.bus_bandwidth_bytes_per_s = round_significant(fit.bus_bandwidth_bytes_per_s);
        p.collective_fits.push_back(fit);
        doc_.collective_fit_comments.push_back(
            fmt::format("{} sizes, max error {:.1f}%, rms {:.1f}%", f.quality.points,
                        100 * f.quality.max_relative_error, 100 * f.quality.rms_relative_error));
      }
      for (const std::string& n : fit_notes) note("collective fits: " + n);
      if (!p.collective_fits.empty()) {
        source("collective_fits",
               "fitted to collective_samples: piecewise alpha-beta, least squares of relative "
               "errors, ranges chosen by BIC (calibrate/fit)");
      }
    }
    for (const auto& s : m_.copies) {
      p.copy_samples.push_back({s.c.direction, s.c.concurrent, s.c.bytes,
                                round_significant(s.summary.median_s), sample_spread(s.summary)});
      doc_.copy_comments.push_back(
          sample_comment(s.summary, rounded_rate(s.c.bytes / s.summary.median_s, QuantityKind::kBandwidth)));
    }
    if (!p.copy_samples.empty()) {
      source("copy_samples", cpu_
                                 ? "measured: memcpy between host buffers, one worker thread per device, the "
                                   "slowest of the concurrent copies"
                                 : "measured: cudaMemcpyAsync between pinned host memory and each GPU, the "
                                   "slowest of the concurrent copies, CUDA events");
    }
  }

  void provenance() {
    const DeviceFacts& f = m_.facts;
    config::Provenance& p = profile_.provenance;
    p.kind = config::ProvenanceKind::kMeasured;
    p.date = o_.date;
    p.tool_version = o_.tool_version;
    p.command = o_.command;
    p.software = {f.driver_version,      f.runtime_version, f.blas_version,
                  f.collectives_version, f.compiler,        f.attention_kernel};
    p.host = {f.host_cpu, f.host_name};
    std::vector<std::string> lines;
    lines.push_back(fmt::format("Measured by trainsim calibrate run, {} backend, on {} x {}.", f.backend,
                                f.devices, f.device_name));
    if (cpu_) {
      lines.push_back(
          "cpu device: the CPU references of kernels/ stand for the kernels, worker threads for the GPUs, "
          "host memcpy "
          "for host copies and device memory, shared-memory copies between threads for the collectives (this "
          "host's intra-node tier). Rates are the CPU's; use this profile to test the pipeline, not to "
          "predict "
          "GPU training.");
    }
    lines.push_back(fmt::format(
        "Timing: {}; each case {} warm-up runs{}, then the median of {} repetitions of at least {} "
        "(collectives: "
        "{} and {}; copies: {} and {}); every run reads the next of a rotating set of buffers larger than "
        "twice "
        "the {} last-level cache. Wall time {:.1f} s.",
        cpu_ ? "std::chrono steady_clock" : "CUDA events", m_.compute_policy.warmup,
        m_.compute_policy.settle_s > 0
            ? fmt::format(" and {} back to back (clocks settle under the power cap)",
                          quantity(m_.compute_policy.settle_s, QuantityKind::kDuration))
            : "",
        m_.compute_policy.repetitions, quantity(m_.compute_policy.min_repetition_s, QuantityKind::kDuration),
        m_.collective_policy.warmup, m_.collective_policy.repetitions, m_.copy_policy.warmup,
        m_.copy_policy.repetitions, quantity(f.cache_bytes, QuantityKind::kBytes), m_.wall_s));
    if (o_.base) {
      lines.push_back(fmt::format("Datasheet numbers (gpu.peak_flops, gpu.hbm.bandwidth) from {} ({}).",
                                  o_.base_label, o_.base->content_hash));
    }
    if (m_.pipeline_sync) {
      lines.push_back(
          fmt::format("FPDT cross-check: DeepSpeed's host syncs add {} per attention block to the real "
                      "pipeline (forward with "
                      "host syncs minus with events only), against compute.host_sync {}.",
                      quantity(round_significant(m_.pipeline_sync->median_s, 3), QuantityKind::kDuration),
                      quantity(profile_.compute.host_sync_s, QuantityKind::kDuration)));
    }
    for (const std::string& n : m_.notes) lines.push_back(n);
    for (const std::string& n : notes_) lines.push_back(n);
    for (const std::string& line : lines) p.notes += (p.notes.empty() ? "" : "\n") + line;

    doc_.header.push_back(fmt::format(
        "{} x {}: {}{}{}", f.devices, f.device_name,
        f.multiprocessors > 0 ? fmt::format("{} {}", f.multiprocessors, cpu_ ? "CPUs" : "SMs") : "",
        f.memory_bytes > 0 ? ", " + readable_quantity(f.memory_bytes, QuantityKind::kBytes) : "",
        f.host_name.empty() ? "" : ", host " + f.host_name));
    if (cpu_ && !f.compiler.empty()) doc_.header.push_back("compiler " + f.compiler);
    if (!cpu_) {
      doc_.header.push_back(fmt::format("driver {}, CUDA runtime {}, cuBLASLt {}, NCCL {}", f.driver_version,
                                        f.runtime_version, f.blas_version, f.collectives_version));
    }
    doc_.header.push_back(fmt::format("{}, {}", o_.tool_version, o_.date));
    doc_.header.push_back("command: " + o_.command);
  }

  // The base's figures (NCCL's buffers need several GPUs to measure), the context measured on a GPU.
  void runtime_memory() {
    const std::optional<config::RuntimeMemory> base =
        o_.base ? o_.base->runtime_memory : std::optional<config::RuntimeMemory>();
    const double context = m_.facts.context_bytes;
    if (!base && !(context > 0)) return;
    config::RuntimeMemory& r = profile_.runtime_memory.emplace(base.value_or(config::RuntimeMemory{}));
    const auto cite_base = [&](const char* key, double value) {
      const std::string path = std::string("runtime_memory.") + key;
      if (value > 0) source(path, from_base(path));
    };
    cite_base("context", r.context_bytes);
    cite_base("collective_communicator", r.collective_communicator_bytes);
    cite_base("p2p_peer_in_node", r.p2p_peer_in_node_bytes);
    cite_base("p2p_peer_across_nodes", r.p2p_peer_across_nodes_bytes);
    if (context > 0) {
      r.context_bytes = round_significant(context);
      source(
          "runtime_memory.context",
          "measured: cudaMemGetInfo total - free on device 0 once the CUDA context and the cuBLASLt handle "
          "exist, before any buffer");
    }
  }

  // The measured limit and the three states one GPU holds alone; communication needs peers, so it
  // is the base's. Each state is kept between idle and the limit, as the profile requires (a reading
  // a few watts over the limit is the counter's noise). Without a measurement, the base's section.
  void power() {
    const std::optional<config::GpuPower> base = o_.base ? o_.base->power : std::optional<config::GpuPower>();
    const auto cite_base = [&](const char* key) {
      const std::string path = std::string("power.") + key;
      source(path, from_base(path));
    };
    if (!m_.power) {
      if (!base) return;
      profile_.power = base;
      for (const char* key : {"limit", "idle", "compute", "memory", "communication"}) cite_base(key);
      return;
    }
    const PowerSamples& measured = *m_.power;
    const auto watts = [](double w) { return readable_quantity(w, QuantityKind::kPower); };
    if (!base) {
      note(fmt::format(
          "power measured (limit {}, idle {}, compute {}, memory {}) but not written: the section "
          "also needs communication, which one GPU cannot measure; calibrate with --base a profile "
          "that has it",
          watts(measured.limit_w), watts(measured.idle_w), watts(measured.compute_w),
          watts(measured.memory_w)));
      return;
    }
    config::GpuPower& p = profile_.power.emplace();
    p.limit_w = round_significant(measured.limit_w);
    p.idle_w = std::min(round_significant(measured.idle_w), p.limit_w);
    const auto state = [&](double value) {
      return std::clamp(round_significant(value), p.idle_w, p.limit_w);
    };
    p.compute_w = state(measured.compute_w);
    p.memory_w = state(measured.memory_w);
    p.communication_w = state(base->communication_w);
    const std::string held = fmt::format("{} s", round_significant(m_.power_hold_s, 2));
    source("power.limit", "queried: NVML nvmlDeviceGetEnforcedPowerLimit of device 0");
    source(
        "power.idle",
        fmt::format("measured: board energy (NVML) over {} with a CUDA context and nothing running", held));
    source("power.compute", fmt::format("measured: board energy (NVML) over {} of {} back to back", held,
                                        describe(m_.power_gemm)));
    source("power.memory",
           fmt::format("measured: board energy (NVML) over {} of {} device-to-device copies back "
                       "to back",
                       held, config::format_bytes_rounded(m_.power_copy_bytes)));
    cite_base("communication");
  }

  const Measurements& m_;
  const BuildOptions& o_;
  bool cpu_;
  ProfileDocument doc_;
  config::HardwareProfile& profile_;
  std::map<Dtype, BestRate> best_gemm_;
  std::vector<std::string> notes_;
};

}  // namespace

std::string readable_quantity(double value, config::QuantityKind kind) {
  const std::string exact = config::format_quantity(value, kind);
  return exact.size() <= 9 ? exact : config::format_quantity(round_significant(value), kind);
}

double round_significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double magnitude = std::floor(std::log10(std::abs(value)));
  const double scale = std::pow(10.0, static_cast<double>(digits) - 1 - magnitude);
  return std::round(value * scale) / scale;
}

ProfileDocument build_measured_profile(const Measurements& m, const BuildOptions& options) {
  return Builder(m, options).build();
}

}  // namespace trainsim::calibrate
