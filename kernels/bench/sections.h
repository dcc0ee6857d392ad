// The bench's sections (trainsim-kernel-bench, main.cc): each verifies one kernel family on random
// inputs against its CPU reference, times it with CUDA events and adds its rows to the report, the
// rates as fractions of the ceilings measured first in the same run. One file per family, as
// nccl-tests keeps one per collective.
#ifndef TRAINSIM_KERNELS_BENCH_SECTIONS_H_
#define TRAINSIM_KERNELS_BENCH_SECTIONS_H_

#include <cstdint>
#include <string>

#include "kernels/attention/attention_launch.h"
#include "kernels/bench/report.h"
#include "kernels/data_type.h"
#include "kernels/fpdt/pipeline.h"
#include "kernels/gemm/gemm.h"

namespace trainsim::kernels::bench {

// The two ceilings every rate is judged against.
struct Ceilings {
  double gemm_tflops = 0.0;
  double copy_gbps = 0.0;
};

// Relative tolerance of a 16-bit result against the fp32 reference.
inline constexpr double kBf16Tolerance = 1e-2;
inline constexpr double kFp16Tolerance = 2e-3;
inline double tolerance(DataType type) {
  return type == DataType::kBFloat16 ? kBf16Tolerance : kFp16Tolerance;
}
inline double tflops(double flops, double ms) { return flops / (ms * 1e9); }

// ceilings.cc: the GEMM ceiling (8192^3 bf16 through cuBLASLt, spot-checked) in TFLOP/s, the copy
// ceiling (a 2 GiB device-to-device copy, bytes read and written) in GB/s, and the pinned host links
// (1 GiB each way, no ceiling fraction).
double measure_gemm_ceiling(Report& report, uint64_t seed);
double measure_copy_ceiling(Report& report);
void measure_host_links(Report& report);

// gemm.cc: one cuBLASLt GEMM of `shape` and `types` (fp8 inputs converted from bf16 draws).
void bench_gemm(Report& report, const Ceilings& ceilings, const std::string& name, const GemmShape& shape,
                const GemmTypes& types, uint64_t seed);

// nccl.cc: every collective over the local GPUs (one rank each), checked against its definition.
void check_nccl(Report& report);

// attention.cc: the odd shapes of tests/kernels/attention_gpu_test.cc against the full reference
// (no timing); one timed pass of `kernel` on `s`, spot-checked; the (out, lse) merge of a block.
void sweep_attention(Report& report, uint64_t seed, AttentionKernel kernel);
void bench_attention(Report& report, const Ceilings& ceilings, const AttentionShape& s, bool causal,
                     DataType type, bool backward, int runs, uint64_t seed, AttentionKernel kernel);
void bench_merge(Report& report, const Ceilings& ceilings, const AttentionRows& rows, uint64_t seed);

// fpdt.cc: FPDT forward + backward over the chunks of `shape` without offload, with offload and
// events, and with DeepSpeed's host syncs, on `kernel`'s attention blocks; verified on sampled rows
// of the whole sequence, timed on the compute stream; notes each offload mode against no offload.
void bench_fpdt(Report& report, const Ceilings& ceilings, const FpdtShape& shape, int runs, uint64_t seed,
                AttentionKernel kernel);

}  // namespace trainsim::kernels::bench

#endif  // TRAINSIM_KERNELS_BENCH_SECTIONS_H_
