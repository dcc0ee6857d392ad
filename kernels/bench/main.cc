// trainsim-kernel-bench: verifies every kernel of kernels/ on random inputs against the CPU
// reference (outputs poisoned first), then times it with CUDA events (median after warm-up) and
// prints TFLOP/s or GB/s beside the two ceilings measured in the same run: a large cuBLASLt bf16
// GEMM and a device-to-device copy. Exit status: 0 all verified, 1 a verification failed, 2 no
// device or bad arguments, 3 an error.
//
//   trainsim-kernel-bench [--output FILE] [--quick] [--seed N] [--only SECTION[,SECTION...]]
//
// Sections: ceilings, gemm, nccl, merge, attention-check, attention, fpdt (default: all); on a
// compute capability 9.0 device the attention sections run again for the wgmma kernels, last. With
// `--only attention` the first attention launch of each pass is the 8K-token forward / backward,
// which is what a profiler run targets.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/bench/report.h"
#include "kernels/bench/sections.h"
#include "kernels/cuda/device.h"
#include "kernels/device_query.h"

namespace trainsim::kernels::bench {
namespace {

struct Options {
  std::string output;
  bool quick = false;
  uint64_t seed = 2026;
  std::vector<std::string> only;  // sections to run; empty: all

  bool runs(const std::string& section) const {
    return only.empty() || std::find(only.begin(), only.end(), section) != only.end();
  }
};

const std::vector<std::string> kSections = {"ceilings",        "gemm",      "nccl", "merge",
                                            "attention-check", "attention", "fpdt"};

int run(const Options& options) {
  const DeviceInfo device = device_info(current_device());
  Report report;
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::ostringstream header;
  header << "# trainsim kernel bench: " << device.name << " (sm_" << device.compute_major
         << device.compute_minor << ", " << device.multiprocessors << " SMs, "
         << device.memory_bytes / (1 << 30) << " GiB), " << date << ", seed " << options.seed
         << (options.quick ? ", quick" : "");
  report.note(header.str());
  const auto start = std::chrono::steady_clock::now();

  // Each section runs guarded: one that throws becomes a FAILED row and the next still runs (an
  // error that poisons the CUDA context makes the later ones fail fast, each with its message).
  auto guarded = [&report, &options](const std::string& key, const std::string& section, const auto& body) {
    if (!options.runs(key)) {
      return;
    }
    try {
      body();
    } catch (const std::exception& error) {
      report.failed(section, error.what());
    }
  };
  Ceilings ceilings;
  guarded("ceilings", "ceiling: cuBLASLt GEMM bf16",
          [&] { ceilings.gemm_tflops = measure_gemm_ceiling(report, options.seed); });
  guarded("ceilings", "ceiling: device copy", [&] { ceilings.copy_gbps = measure_copy_ceiling(report); });
  guarded("ceilings", "pinned copies", [&] { measure_host_links(report); });
  std::ostringstream ceiling_note;
  ceiling_note << "- ceilings measured in this run: GEMM " << ceilings.gemm_tflops << " TFLOP/s, copy "
               << ceilings.copy_gbps
               << " GB/s; 'of ceiling' is against the GEMM for TFLOP/s rows, the copy for GB/s rows";
  report.note(ceiling_note.str());

  // The library-backed kernels first, then ours, so a fault in ours leaves the others measured.
  uint64_t seed = options.seed + 100;
  const int64_t tokens = 16384;
  const GemmTypes bf16{DataType::kBFloat16, DataType::kBFloat16};
  const std::vector<std::tuple<std::string, GemmShape, GemmTypes>> gemms = {
      {"QKV projection X·Wᵀ", linear_forward(tokens, 4096, 6144), bf16},
      {"FFN up X·Wᵀ", linear_forward(tokens, 4096, 14336), bf16},
      {"FFN down dX = dY·W", linear_input_grad(tokens, 14336, 4096), bf16},
      {"FFN up dW = dYᵀ·X", linear_weight_grad(tokens, 4096, 14336), bf16},
      {"FFN up X·Wᵀ", linear_forward(tokens, 4096, 14336), {DataType::kFloat8E4M3, DataType::kBFloat16}}};
  for (const auto& [name, shape, types] : gemms) {
    if (gemm_supported(shape, types, device.compute_major, device.compute_minor)) {
      guarded("gemm", "GEMM " + name, [&] { bench_gemm(report, ceilings, name, shape, types, seed += 10); });
    }
  }
  guarded("nccl", "NCCL", [&] { check_nccl(report); });
  const std::vector<int64_t> lengths =
      options.quick ? std::vector<int64_t>{8192, 16384} : std::vector<int64_t>{8192, 16384, 32768, 65536};
  guarded("merge", "merge", [&] { bench_merge(report, ceilings, {1, lengths.back(), 8, 128}, seed += 10); });
  // The attention kernels: the full check, the timed passes and the FPDT pipeline on them, of each
  // kernel the device runs; the wgmma ones last, so that a fault in them (not yet verified on a GPU)
  // leaves the rest measured.
  const int64_t chunk = options.quick ? 16384 : 65536;
  auto attention = [&](AttentionKernel kernel) {
    const std::string suffix = kernel == AttentionKernel::kWgmma ? " wgmma" : "";
    guarded("attention-check", "attention full check" + suffix,
            [&] { sweep_attention(report, seed += 1000, kernel); });
    for (const bool backward : {false, true}) {
      const std::string section = (backward ? "attention backward" : "attention forward") + suffix;
      for (const int64_t n : lengths) {
        guarded("attention", section, [&] {
          bench_attention(report, ceilings, {1, n, n, 8, 2, 128}, false, DataType::kBFloat16, backward,
                          n >= 32768 ? 5 : 10, seed += 10, kernel);
        });
      }
      guarded("attention", section, [&] {
        bench_attention(report, ceilings, {1, lengths.back(), lengths.back(), 8, 2, 128}, true,
                        DataType::kBFloat16, backward, 5, seed += 10, kernel);
      });
      guarded("attention", section, [&] {
        bench_attention(report, ceilings, {1, 16384, 16384, 16, 16, 64}, false, DataType::kBFloat16, backward,
                        10, seed += 10, kernel);
      });
      guarded("attention", section, [&] {
        bench_attention(report, ceilings, {1, 16384, 16384, 8, 2, 128}, false, DataType::kFloat16, backward,
                        10, seed += 10, kernel);
      });
    }
    guarded("fpdt", "FPDT" + suffix, [&] {
      bench_fpdt(report, ceilings, {1, 8, 2, 128, {chunk, chunk, chunk, chunk}}, 2, seed += 10, kernel);
    });
  };
  attention(AttentionKernel::kMmaSync);
  // What is measured so far goes to the file before the wgmma kernels run: if one of them hangs and
  // the bench is killed, the file still holds every other row (without the wall-time line the final
  // write adds).
  const auto save = [&report, &options] {
    if (options.output.empty()) return true;
    std::ofstream file(options.output);
    report.print(file);
    if (!file) std::cerr << "trainsim-kernel-bench: cannot write " << options.output << "\n";
    return static_cast<bool>(file);
  };
  bool wgmma = false;
  guarded("attention", "attention wgmma",
          [&] { wgmma = attention_kernel_available(AttentionKernel::kWgmma); });
  if (wgmma) {
    if (!save()) return 3;
    attention(AttentionKernel::kWgmma);
  }

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream footer;
  footer << "- bench wall time " << static_cast<int>(seconds) << " s";
  report.note(footer.str());
  report.print(std::cout);
  if (!save()) return 3;
  if (!report.all_verified()) {
    std::cerr << "trainsim-kernel-bench: a kernel FAILED verification (see the 'verified' column)\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace trainsim::kernels::bench

int main(int argc, char** argv) {
  trainsim::kernels::bench::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--output" && i + 1 < argc) {
      options.output = argv[++i];
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--seed" && i + 1 < argc) {
      options.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--only" && i + 1 < argc) {
      std::istringstream list(argv[++i]);
      for (std::string section; std::getline(list, section, ',');) {
        if (std::find(trainsim::kernels::bench::kSections.begin(), trainsim::kernels::bench::kSections.end(),
                      section) == trainsim::kernels::bench::kSections.end()) {
          std::cerr << "trainsim-kernel-bench: unknown section '" << section << "' in --only\n";
          return 2;
        }
        options.only.push_back(section);
      }
    } else {
      std::cerr << "usage: trainsim-kernel-bench [--output FILE] [--quick] [--seed N] [--only SECTION,...]\n";
      return 2;
    }
  }
  if (!trainsim::kernels::cuda_device_available()) {
    std::cerr << "trainsim-kernel-bench: no CUDA device (cudaGetDeviceCount failed or found none)\n";
    return 2;
  }
  try {
    return trainsim::kernels::bench::run(options);
  } catch (const std::exception& error) {
    std::cerr << "trainsim-kernel-bench: " << error.what() << "\n";
    return 3;
  }
}
