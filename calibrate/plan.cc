#include "calibrate/plan.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate/collective_kinds.h"
#include "sim/config/units.h"

namespace trainsim::calibrate {
namespace {

using config::AttentionPass;
using config::CollectiveKind;
using config::CopyDirection;
using config::Dtype;

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * kKiB;
constexpr double kGiB = 1024.0 * kMiB;

bool has(const std::vector<Dtype>& dtypes, Dtype d) {
  return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
}

// Geometric sizes lo, lo·factor, ... up to hi, with hi itself always last.
std::vector<double> geometric(double lo, double hi, double factor) {
  std::vector<double> sizes;
  for (double s = lo; s < hi; s *= factor) sizes.push_back(s);
  sizes.push_back(hi);
  return sizes;
}

// Collective group sizes: every size of the node in a full run; powers of two and the node size in
// a quick one.
std::vector<int> group_sizes(int devices, bool quick) {
  std::vector<int> sizes;
  for (int g = 1; g <= devices; ++g) {
    const bool power_of_two = (g & (g - 1)) == 0;
    if (!quick || power_of_two || g == devices) sizes.push_back(g);
  }
  return sizes;
}

struct Grid {
  std::vector<std::pair<Dtype, std::vector<int64_t>>> gemm_full_grid;  // every (m, n, k) combination
  std::vector<std::pair<Dtype, std::vector<int64_t>>> gemm_cubes;      // m = n = k only
  std::vector<int64_t> attention_lengths;
  std::vector<std::pair<int64_t, int64_t>> attention_heads;  // (heads, kv_heads)
  std::vector<Dtype> attention_dtypes;
  std::vector<double> collective_sizes;
  std::vector<double> copy_sizes;
  std::vector<double> device_copy_sizes;
  GemmCase interference_gemm;
  double interference_bytes = 0;
  double power_hold_s = 0;
};

Grid gpu_grid(bool quick, const Capabilities& caps) {
  Grid g;
  const std::vector<int64_t> quick_sizes = {1024, 4096, 8192};
  const std::vector<int64_t> full_sizes = {256, 512, 1024, 2048, 4096, 8192, 16384};
  if (has(caps.gemm_dtypes, Dtype::kBf16))
    g.gemm_full_grid.push_back({Dtype::kBf16, quick ? quick_sizes : full_sizes});
  if (has(caps.gemm_dtypes, Dtype::kFp16)) {
    if (quick) {
      g.gemm_cubes.push_back({Dtype::kFp16, quick_sizes});
    } else {
      g.gemm_full_grid.push_back({Dtype::kFp16, full_sizes});
    }
  }
  if (has(caps.gemm_dtypes, Dtype::kFp8)) {
    g.gemm_cubes.push_back(
        {Dtype::kFp8, quick ? quick_sizes : std::vector<int64_t>{1024, 2048, 4096, 8192, 16384}});
  }
  g.attention_lengths = quick ? std::vector<int64_t>{1024, 4096, 16384}
                              : std::vector<int64_t>{512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
  g.attention_heads = quick ? std::vector<std::pair<int64_t, int64_t>>{{8, 8}}
                            : std::vector<std::pair<int64_t, int64_t>>{{8, 8}, {32, 8}};
  g.attention_dtypes = {Dtype::kBf16};
  if (!quick && has(caps.attention_dtypes, Dtype::kFp16)) g.attention_dtypes.push_back(Dtype::kFp16);
  g.collective_sizes = geometric(8, kGiB, quick ? 4 : 2);
  g.copy_sizes = geometric(8, kGiB, quick ? 16 : 4);
  g.device_copy_sizes = quick ? std::vector<double>{256 * kMiB, 2 * kGiB} : geometric(kMiB, 2 * kGiB, 4);
  g.interference_gemm = {Dtype::kBf16, 8192, 8192, 8192};
  g.interference_bytes = 256 * kMiB;
  g.power_hold_s = quick ? 2 : 5;  // NVML's energy counter moves every 20-100 ms
  return g;
}

Grid cpu_grid(bool quick) {
  Grid g;
  g.gemm_full_grid.push_back({Dtype::kFp32, quick ? std::vector<int64_t>{32, 128, 256}
                                                  : std::vector<int64_t>{32, 64, 128, 256, 512}});
  g.gemm_cubes.push_back(
      {Dtype::kFp64, quick ? std::vector<int64_t>{64, 256} : std::vector<int64_t>{64, 128, 256, 512}});
  g.attention_lengths = quick ? std::vector<int64_t>{64, 256} : std::vector<int64_t>{64, 128, 256, 512};
  g.attention_heads = quick ? std::vector<std::pair<int64_t, int64_t>>{{2, 2}}
                            : std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {4, 2}};
  g.attention_dtypes = {Dtype::kFp32};
  g.collective_sizes = geometric(8, quick ? 4 * kMiB : 64 * kMiB, quick ? 4 : 2);
  g.copy_sizes = geometric(4 * kKiB, quick ? 16 * kMiB : 64 * kMiB, quick ? 16 : 4);
  g.device_copy_sizes = {64 * kMiB};
  g.interference_gemm = {Dtype::kFp32, 128, 128, 128};
  g.interference_bytes = 1 * kMiB;
  g.power_hold_s = 0.05;
  return g;
}

// Adds cases to a plan once each, naming in its notes those this backend cannot run.
class Cases {
 public:
  Cases(CalibrationPlan& plan, const Capabilities& caps, bool gpu) : plan_(plan), caps_(caps), gpu_(gpu) {}

  void gemm(const GemmCase& c, const char* origin) {
    if (!has(caps_.gemm_dtypes, c.dtype)) {
      skip(origin, describe(c),
           fmt::format("the {} backend has no {} GEMM", backend(), config::to_string(c.dtype)));
    } else if (c.flops() > caps_.max_case_flops) {
      skip(origin, describe(c), too_large(c.flops()));
    } else if (seen_gemms_.insert({c.dtype, c.m, c.n, c.k}).second) {
      plan_.gemms.push_back(c);
    }
  }

  void attention(const AttentionCase& c, const char* origin) {
    const bool head_dim_ok = std::find(caps_.attention_head_dims.begin(), caps_.attention_head_dims.end(),
                                       c.head_dim) != caps_.attention_head_dims.end();
    if (!has(caps_.attention_dtypes, c.dtype) || !head_dim_ok) {
      skip(origin, describe(c),
           fmt::format("the attention kernels run {} with head_dim {}", gpu_ ? "bf16/fp16" : "fp32",
                       fmt::join(caps_.attention_head_dims, "/")));
    } else if (c.flops() > caps_.max_case_flops) {
      skip(origin, describe(c), too_large(c.flops()));
    } else if (seen_attentions_.insert(key(c)).second) {
      plan_.attentions.push_back(c);
    }
  }

  void collective(const CollectiveCase& c) {
    if (seen_collectives_.insert({c.kind, c.ranks, c.bytes}).second) plan_.collectives.push_back(c);
  }
  void copy(const CopyCase& c) {
    if (seen_copies_.insert({c.direction, c.concurrent, c.bytes}).second) plan_.copies.push_back(c);
  }
  void skip(const char* origin, const std::string& what, const std::string& why) {
    plan_.notes.push_back(fmt::format("{} {} skipped: {}", origin, what, why));
  }

 private:
  using AttentionKey =
      std::tuple<AttentionPass, bool, Dtype, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
  static AttentionKey key(const AttentionCase& c) {
    return {c.pass, c.causal, c.dtype, c.batch, c.heads, c.kv_heads, c.q_len, c.kv_len, c.head_dim};
  }
  const char* backend() const { return gpu_ ? "cuda" : "cpu"; }
  std::string too_large(double flops) const {
    return fmt::format("{:.3g} FLOP is beyond this backend's {:.3g} per case", flops, caps_.max_case_flops);
  }

  CalibrationPlan& plan_;
  const Capabilities& caps_;
  bool gpu_;
  std::set<std::tuple<Dtype, int64_t, int64_t, int64_t>> seen_gemms_;
  std::set<AttentionKey> seen_attentions_;
  std::set<std::tuple<CollectiveKind, int, double>> seen_collectives_;
  std::set<std::tuple<CopyDirection, int, double>> seen_copies_;
};

// The calls a scenario's simulation prices, beside the grid: collectives of groups within one node
// of at most `devices` GPUs, and message and copy sizes up to the grid's largest (a larger one is
// read from the fit beyond it, as the simulation reads it from a profile).
void add_scenario(const workload::KernelShapes& shapes, const Grid& grid, int devices,
                  const std::vector<int>& concurrency, Cases& cases) {
  for (const workload::KernelShapes::Gemm& g : shapes.gemms) cases.gemm({g.dtype, g.m, g.n, g.k}, "scenario");
  for (const workload::KernelShapes::Attention& a : shapes.attentions) {
    const AttentionCase c{a.pass,     a.causal, a.dtype,  a.batch,   a.heads,
                          a.kv_heads, a.q_len,  a.kv_len, a.head_dim};
    if (a.value_dim != a.head_dim) {
      cases.skip("scenario", describe(c),
                 fmt::format("its values have {} dimensions, the attention kernels as many as the keys",
                             a.value_dim));
    } else {
      cases.attention(c, "scenario");
    }
  }
  const std::vector<CollectiveKind>& measured = measured_collectives();
  const double largest_message = grid.collective_sizes.back();
  int spanning = 0;
  for (const workload::KernelShapes::Collective& s : shapes.collectives) {
    const CollectiveCase c{s.kind, static_cast<int>(s.ranks), s.bytes};
    if (!s.one_node) {
      ++spanning;
    } else if (s.ranks > devices) {
      cases.skip("scenario", describe(c), fmt::format("this node has {} devices", devices));
    } else if (std::find(measured.begin(), measured.end(), s.kind) == measured.end()) {
      cases.skip("scenario", describe(c), "the harness does not time this collective");
    } else if (s.bytes > largest_message) {
      cases.skip("scenario", describe(c),
                 fmt::format("larger than this backend's largest message, {}",
                             config::format_quantity(largest_message, config::QuantityKind::kBytes)));
    } else {
      cases.collective(c);
    }
  }
  if (spanning > 0) {
    cases.skip("scenario", fmt::format("{} collective sizes", spanning),
               "their groups span nodes, so the network prices them (import nccl-tests logs of the "
               "cluster with `trainsim calibrate import`)");
  }
  const double largest_copy = grid.copy_sizes.back();
  for (const workload::KernelShapes::Copy& s : shapes.copies) {
    if (s.bytes > largest_copy) {
      cases.skip("scenario", describe(CopyCase{s.direction, concurrency.front(), s.bytes}),
                 fmt::format("larger than this backend's largest copy, {}",
                             config::format_quantity(largest_copy, config::QuantityKind::kBytes)));
      continue;
    }
    for (const int concurrent : concurrency) cases.copy({s.direction, concurrent, s.bytes});
  }
}

}  // namespace

size_t CalibrationPlan::item_count() const {
  return gemms.size() + attentions.size() + collectives.size() + copies.size() + device_copy_bytes.size() + 3;
}

CalibrationPlan make_plan(const PlanOptions& options, const Capabilities& caps) {
  if (options.devices < 1) throw std::invalid_argument("a calibration needs at least one device");
  const bool gpu = caps.scale == DeviceScale::kGpu;
  const Grid grid = gpu ? gpu_grid(options.quick, caps) : cpu_grid(options.quick);
  CalibrationPlan plan;

  // Policies: nccl-tests' habit of a few warm-up runs and tens of timed ones; shorter on the CPU,
  // whose reference kernels run for milliseconds. GPU kernels settle for 250 ms first: a power
  // cap takes effect within tens of milliseconds of sustained load.
  plan.compute_policy = gpu ? TimingPolicy{2, options.quick ? 8 : 12, 2e-3, 1000, 0.25}
                            : TimingPolicy{1, options.quick ? 5 : 10, 2e-3, 1000};
  plan.collective_policy = gpu ? TimingPolicy{5, options.quick ? 10 : 20, 1e-3, 200}
                               : TimingPolicy{1, options.quick ? 5 : 10, 1e-3, 200};
  plan.copy_policy = gpu ? TimingPolicy{3, options.quick ? 10 : 20, 1e-3, 200}
                         : TimingPolicy{1, options.quick ? 5 : 10, 1e-3, 200};

  Cases cases(plan, caps, gpu);
  for (const auto& [dtype, sizes] : grid.gemm_full_grid) {
    for (const int64_t m : sizes) {
      for (const int64_t n : sizes) {
        for (const int64_t k : sizes) cases.gemm({dtype, m, n, k}, "grid");
      }
    }
  }
  for (const auto& [dtype, sizes] : grid.gemm_cubes) {
    for (const int64_t s : sizes) cases.gemm({dtype, s, s, s}, "grid");
  }

  for (const Dtype dtype : grid.attention_dtypes) {
    for (const int64_t head_dim : caps.attention_head_dims) {
      for (const auto& [heads, kv_heads] : grid.attention_heads) {
        for (const int64_t length : grid.attention_lengths) {
          for (const bool causal : {false, true}) {
            for (const AttentionPass pass : {AttentionPass::kForward, AttentionPass::kBackward}) {
              const AttentionCase c{pass, causal, dtype, 1, heads, kv_heads, length, length, head_dim};
              if (c.flops() <= caps.max_case_flops) cases.attention(c, "grid");
            }
          }
        }
      }
    }
  }

  for (const CollectiveKind kind : measured_collectives()) {
    for (const int ranks : group_sizes(options.devices, options.quick)) {
      if (kind == CollectiveKind::kBarrier) {
        cases.collective({kind, ranks, 0});
        continue;
      }
      for (const double bytes : grid.collective_sizes) cases.collective({kind, ranks, bytes});
    }
  }

  std::vector<int> concurrency = {1};
  if (options.devices > 1) {
    concurrency = options.quick ? std::vector<int>{1, options.devices} : group_sizes(options.devices, false);
  }
  for (const CopyDirection direction : {CopyDirection::kHostToDevice, CopyDirection::kDeviceToHost}) {
    for (const int concurrent : concurrency) {
      for (const double bytes : grid.copy_sizes) cases.copy({direction, concurrent, bytes});
    }
  }
  if (options.scenario) add_scenario(*options.scenario, grid, options.devices, concurrency, cases);
  plan.device_copy_bytes = grid.device_copy_sizes;
  plan.interference_gemm = grid.interference_gemm;
  plan.interference_collective = {CollectiveKind::kAllReduce, options.devices, grid.interference_bytes};
  plan.power_gemm = grid.interference_gemm;
  plan.power_copy_bytes = grid.device_copy_sizes.back();
  plan.power_hold_s = grid.power_hold_s;
  return plan;
}

}  // namespace trainsim::calibrate
