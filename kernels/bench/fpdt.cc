// The FPDT pipeline section of the bench (sections.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/bench/sections.h"
#include "kernels/bench/tensors.h"
#include "kernels/bench/timing.h"
#include "kernels/bench/verify.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/fpdt/sequence_io.h"
#include "kernels/reference/attention.h"

namespace trainsim::kernels::bench {

// FPDT forward + backward over u chunks in three modes, on `kernel`'s attention blocks, verified on
// sampled rows of the whole sequence (FPDT equals dense causal attention), timed on the compute stream.
void bench_fpdt(Report& report, const Ceilings& ceilings, const FpdtShape& shape, int runs, uint64_t seed,
                AttentionKernel kernel) {
  const AttentionShape whole = shape.whole();
  const AttentionOptions causal{true, std::nullopt};
  DeviceSequenceIo io(shape, DataType::kBFloat16);
  auto fill = [&](DeviceBuffer<std::byte>& buffer, int64_t count, uint64_t s) {
    Tensor16 t = random_tensor16(count, DataType::kBFloat16, s);
    CUDA_CHECK(cudaMemcpy(buffer.data(), t.device.data(), buffer.bytes(), cudaMemcpyDeviceToDevice));
    return std::move(t.values);
  };
  const std::vector<float> q = fill(io.q(), whole.q_elements(), seed);
  const std::vector<float> k = fill(io.k(), whole.kv_elements(), seed + 1);
  const std::vector<float> v = fill(io.v(), whole.kv_elements(), seed + 2);
  const std::vector<float> dout = fill(io.dout(), whole.q_elements(), seed + 3);
  std::ostringstream desc;
  desc << "u" << shape.chunks() << " x " << shape.chunk_tokens[0] << " tokens, h" << shape.heads << "/"
       << shape.kv_heads << " d" << shape.head_dim;
  const double fwd_flops = attention_forward_flops(whole, true);
  const double bwd_flops = attention_backward_flops(whole, true);
  double baseline_ms = 0.0;
  for (const auto& [offload, sync, label] :
       {std::tuple{false, FpdtSync::kEvents, "no offload"},
        std::tuple{true, FpdtSync::kEvents, "offload, events"},
        std::tuple{true, FpdtSync::kHostSyncs, "offload, DeepSpeed host syncs"}}) {
    FpdtAttention pipeline(shape, {offload, sync, DataType::kBFloat16, std::nullopt, kernel});
    for (DeviceBuffer<std::byte>* poisoned : {&io.out(), &io.dq(), &io.dk(), &io.dv()}) {
      CUDA_CHECK(cudaMemset(poisoned->data(), 0xFF, poisoned->bytes()));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    pipeline.forward(io);
    pipeline.backward(io);
    pipeline.synchronize();
    const std::vector<float> out = download16(io.out().data(), whole.q_elements(), DataType::kBFloat16);
    // Rows at the start, a third in and the end: out against the reference rows, whose lse the
    // backward check of the same rows reuses (the pipeline keeps its lse to itself).
    const std::vector<int64_t> rows = {0, whole.q_len / 3, whole.q_len - 1};
    std::vector<float> lse(static_cast<size_t>(whole.lse_elements()), 0.0F);
    Check fwd_check(kBf16Tolerance);
    if (!all_finite(out)) {
      fwd_check.fail("NaN or infinity in out");
    }
    for (const int64_t i : rows) {
      for (int64_t h = 0; h < whole.heads && fwd_check.ok(); ++h) {
        const reference::ForwardRow row =
            reference::attention_forward_row<float>(whole, causal, {q, k, v}, 0, h, i);
        fwd_check.row(out.data() + (i * whole.heads + h) * whole.head_dim, row.out,
                      "out(i=" + std::to_string(i) + ")");
        lse[h * whole.q_len + i] = static_cast<float>(row.lse);
      }
    }
    // dq of those rows needs only their own lse; dk, dv of the last key only the last row's (causal).
    Check bwd_check(kBf16Tolerance);
    const std::vector<float> dq = download16(io.dq().data(), whole.q_elements(), DataType::kBFloat16);
    const std::vector<float> dk = download16(io.dk().data(), whole.kv_elements(), DataType::kBFloat16);
    const std::vector<float> dv = download16(io.dv().data(), whole.kv_elements(), DataType::kBFloat16);
    if (!all_finite(dq) || !all_finite(dk) || !all_finite(dv)) {
      bwd_check.fail("NaN or infinity in dq, dk or dv");
    }
    // The first query sees one key, so its dq is exactly zero: every row is judged against the
    // largest reference value of all the sampled rows.
    const reference::BackwardInputs<float> in{q, k, v, out, lse, dout};
    std::vector<std::vector<double>> dq_rows;
    double dq_scale = 0.0;
    for (const int64_t i : rows) {
      for (int64_t h = 0; h < whole.heads; ++h) {
        dq_rows.push_back(reference::attention_backward_dq_row<float>(whole, causal, in, 0, h, i));
        for (const double x : dq_rows.back()) {
          dq_scale = std::max(dq_scale, std::abs(x));
        }
      }
    }
    for (size_t r = 0; r < dq_rows.size() && bwd_check.ok(); ++r) {
      const int64_t i = rows[r / static_cast<size_t>(whole.heads)];
      const int64_t h = static_cast<int64_t>(r) % whole.heads;
      bwd_check.row(dq.data() + (i * whole.heads + h) * whole.head_dim, dq_rows[r],
                    "dq(i=" + std::to_string(i) + ", h=" + std::to_string(h) + ")", dq_scale);
    }
    const int64_t last = whole.kv_len - 1;
    for (int64_t hk = 0; hk < whole.kv_heads && bwd_check.ok(); ++hk) {
      const reference::KvRowGradients g =
          reference::attention_backward_kv_row<float>(whole, causal, in, 0, hk, last);
      bwd_check.row(dk.data() + (last * whole.kv_heads + hk) * whole.head_dim, g.dk, "dk(last key)");
      bwd_check.row(dv.data() + (last * whole.kv_heads + hk) * whole.head_dim, g.dv, "dv(last key)");
    }
    const Timing fwd = time_on_stream(pipeline.compute_stream(), 1, runs, [&] { pipeline.forward(io); });
    pipeline.backward(io);  // pairs with the last forward
    const Timing both = time_on_stream(pipeline.compute_stream(), 0, runs, [&] {
      pipeline.forward(io);
      pipeline.backward(io);
    });
    const double bwd_ms = std::max(both.median_ms - fwd.median_ms, 1e-9);
    const std::string mode =
        std::string("FPDT ") + label + (kernel == AttentionKernel::kWgmma ? ", wgmma" : "");
    report.add({mode + " forward", desc.str(), fwd.median_ms, tflops(fwd_flops, fwd.median_ms), 0.0,
                tflops(fwd_flops, fwd.median_ms) / ceilings.gemm_tflops, fwd_check.summary()});
    report.add({mode + " backward", desc.str(), bwd_ms, tflops(bwd_flops, bwd_ms), 0.0,
                tflops(bwd_flops, bwd_ms) / ceilings.gemm_tflops, bwd_check.summary()});
    if (!offload) {
      baseline_ms = both.median_ms;
    } else {
      std::ostringstream note;
      note << "- " << mode << ": forward + backward " << both.median_ms << " ms, " << std::showpos
           << 100.0 * (both.median_ms / baseline_ms - 1.0) << std::noshowpos
           << " % against no offload (target: within 10 %); pipeline pinned memory "
           << pipeline.pinned_bytes() / (1 << 20) << " MiB, device " << pipeline.device_bytes() / (1 << 20)
           << " MiB";
      report.note(note.str());
    }
  }
}

}  // namespace trainsim::kernels::bench
