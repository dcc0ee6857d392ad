// The attention sections of the bench: the full check, the timed passes and the merge (sections.h).
#include "kernels/reference/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/bench/sections.h"
#include "kernels/bench/tensors.h"
#include "kernels/bench/timing.h"
#include "kernels/bench/verify.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/stream.h"

namespace trainsim::kernels::bench {

namespace {

std::string describe(const AttentionShape& s, bool causal) {
  std::ostringstream out;
  out << "b" << s.batch << " q" << s.q_len << " kv" << s.kv_len << " h" << s.heads << "/" << s.kv_heads
      << " d" << s.head_dim << (causal ? " causal" : " full");
  return out.str();
}

// "ok", or the summary of the first failed check.
std::string first_failure(std::initializer_list<Check> checks) {
  for (const Check& c : checks) {
    if (!c.ok()) return c.summary();
  }
  return "ok";
}

// Random q, k, v of `s` (seeds seed to seed + 2), out and lse poisoned on `stream`, and the forward
// params over them.
struct ForwardBuffers {
  ForwardBuffers(const AttentionShape& s, const AttentionOptions& options, DataType type, uint64_t seed,
                 cudaStream_t stream)
      : q(random_tensor16(s.q_elements(), type, seed)),
        k(random_tensor16(s.kv_elements(), type, seed + 1)),
        v(random_tensor16(s.kv_elements(), type, seed + 2)),
        out(static_cast<size_t>(s.q_elements())),
        lse(static_cast<size_t>(s.lse_elements())),
        params(make_forward_params(s, options, type, q.device.data(), k.device.data(), v.device.data(),
                                   out.data(), lse.data())) {
    out.fill_bytes_async(0xFF, stream);
    lse.fill_bytes_async(0xFF, stream);
  }

  Tensor16 q, k, v;
  DeviceBuffer<uint16_t> out;
  DeviceBuffer<float> lse;
  AttentionFwdParams params;
};

}  // namespace

void bench_attention(Report& report, const Ceilings& ceilings, const AttentionShape& s, bool causal,
                     DataType type, bool backward, int runs, uint64_t seed, AttentionKernel kernel) {
  const AttentionOptions options{causal, std::nullopt};
  Stream stream;
  const ForwardBuffers buffers(s, options, type, seed, stream.get());
  const AttentionFwdParams& fwd = buffers.params;
  attention_forward(fwd, stream.get(), kernel);
  stream.synchronize();
  const std::vector<float> out_values = download16(buffers.out.data(), s.q_elements(), type);
  const std::vector<float> lse_values = buffers.lse.copy_to_host();
  const std::string name = std::string(backward ? "attention backward " : "attention forward ") +
                           (kernel == AttentionKernel::kWgmma ? "wgmma " : "") + name_of(type);
  if (!backward) {
    const Check check = check_forward(s, options, {buffers.q.values, buffers.k.values, buffers.v.values},
                                      out_values, lse_values, 6, seed, tolerance(type));
    const Timing t =
        time_on_stream(stream.get(), 2, runs, [&] { attention_forward(fwd, stream.get(), kernel); });
    const double rate = tflops(attention_forward_flops(s, causal), t.median_ms);
    report.add(
        {name, describe(s, causal), t.median_ms, rate, 0.0, rate / ceilings.gemm_tflops, check.summary()});
    return;
  }
  const Tensor16 dout = random_tensor16(s.q_elements(), type, seed + 3);
  DeviceBuffer<float> dq(static_cast<size_t>(s.q_elements())), dk(static_cast<size_t>(s.kv_elements())),
      dv(static_cast<size_t>(s.kv_elements())), delta(static_cast<size_t>(backward_delta_elements(fwd)));
  dq.fill_bytes_async(0, stream.get());
  dk.fill_bytes_async(0, stream.get());
  dv.fill_bytes_async(0, stream.get());
  delta.fill_bytes_async(0xFF, stream.get());
  const AttentionBwdParams bwd =
      make_backward_params(fwd, dout.device.data(), dq.data(), dk.data(), dv.data(), delta.data());
  attention_backward(bwd, stream.get(), kernel);
  stream.synchronize();
  const Check check = check_backward(
      s, options, {buffers.q.values, buffers.k.values, buffers.v.values, out_values, lse_values, dout.values},
      dq.copy_to_host(), dk.copy_to_host(), dv.copy_to_host(), 3, seed, tolerance(type));
  const Timing t =
      time_on_stream(stream.get(), 1, runs, [&] { attention_backward(bwd, stream.get(), kernel); });
  const double rate = tflops(attention_backward_flops(s, causal), t.median_ms);
  report.add(
      {name, describe(s, causal), t.median_ms, rate, 0.0, rate / ceilings.gemm_tflops, check.summary()});
}

// Odd shapes against the full reference (no timing): partial tiles, GQA, batches, and the
// bottom-right causal mask with q_len != kv_len both ways, forward and backward. The same cases as
// tests/kernels/attention_gpu_test.cc, for machines without GoogleTest.
void sweep_attention(Report& report, uint64_t seed, AttentionKernel kernel) {
  const std::vector<std::pair<AttentionShape, bool>> cases = {
      {{1, 300, 300, 4, 2, 0}, true}, {{2, 77, 333, 2, 2, 0}, false}, {{1, 200, 64, 3, 1, 0}, true}};
  for (const DataType type : {DataType::kBFloat16, DataType::kFloat16}) {
    for (const int64_t head_dim : {64, 128}) {
      for (auto [s, causal] : cases) {
        s.head_dim = head_dim;
        const AttentionOptions options{causal, std::nullopt};
        Stream stream;
        const ForwardBuffers buffers(s, options, type, seed, stream.get());
        const Tensor16 dout = random_tensor16(s.q_elements(), type, seed + 3);
        seed += 4;
        const AttentionFwdParams& fwd = buffers.params;
        attention_forward(fwd, stream.get(), kernel);
        DeviceBuffer<float> dq(static_cast<size_t>(s.q_elements())), dk(static_cast<size_t>(s.kv_elements())),
            dv(static_cast<size_t>(s.kv_elements())),
            delta(static_cast<size_t>(backward_delta_elements(fwd)));
        dq.fill_bytes_async(0, stream.get());
        dk.fill_bytes_async(0, stream.get());
        dv.fill_bytes_async(0, stream.get());
        attention_backward(
            make_backward_params(fwd, dout.device.data(), dq.data(), dk.data(), dv.data(), delta.data()),
            stream.get(), kernel);
        stream.synchronize();
        const std::vector<float> out_got = download16(buffers.out.data(), s.q_elements(), type);
        const std::vector<float> lse_got = buffers.lse.copy_to_host();
        std::vector<float> out_ref(out_got.size()), lse_ref(lse_got.size());
        reference::attention_forward<float>(
            s, options, {buffers.q.values, buffers.k.values, buffers.v.values}, out_ref, lse_ref);
        // The backward reference takes the kernel's own out and lse, as the kernel does.
        std::vector<float> dq_ref(static_cast<size_t>(s.q_elements())),
            dk_ref(static_cast<size_t>(s.kv_elements())), dv_ref(static_cast<size_t>(s.kv_elements()));
        reference::attention_backward<float>(
            s, options, {buffers.q.values, buffers.k.values, buffers.v.values, out_got, lse_got, dout.values},
            dq_ref, dk_ref, dv_ref);
        report.add({std::string("attention forward + backward ") +
                        (kernel == AttentionKernel::kWgmma ? "wgmma " : "") + name_of(type) + " (full check)",
                    describe(s, causal), 0.0, 0.0, 0.0, 0.0,
                    first_failure({check_tensor(out_got, out_ref, tolerance(type), "out"),
                                   check_tensor(lse_got, lse_ref, 1e-3, "lse"),
                                   check_tensor(dq.copy_to_host(), dq_ref, tolerance(type), "dq"),
                                   check_tensor(dk.copy_to_host(), dk_ref, tolerance(type), "dk"),
                                   check_tensor(dv.copy_to_host(), dv_ref, tolerance(type), "dv")})});
      }
    }
  }
}

void bench_merge(Report& report, const Ceilings& ceilings, const AttentionRows& rows, uint64_t seed) {
  const Tensor16 block = random_tensor16(rows.out_elements(), DataType::kBFloat16, seed);
  const Tensor16 block_lse16 = random_tensor16(rows.lse_elements(), DataType::kBFloat16, seed + 1);
  std::vector<float> out_values(static_cast<size_t>(rows.out_elements()), 0.5F);
  std::vector<float> lse_values(block_lse16.values.size());
  std::vector<float> block_lse_values(block_lse16.values.size());
  for (size_t i = 0; i < lse_values.size(); ++i) {
    lse_values[i] = 50.0F * block_lse16.values[i];  // differences of up to ~100: overflow-prone in log1p form
    block_lse_values[i] = -50.0F * block_lse16.values[(i * 7) % lse_values.size()];
  }
  DeviceBuffer<float> out(out_values.size()), lse(lse_values.size()), block_lse(block_lse_values.size());
  out.copy_from_host(out_values);
  lse.copy_from_host(lse_values);
  block_lse.copy_from_host(block_lse_values);
  Stream stream;
  const MergeParams params = make_merge_params(rows, DataType::kBFloat16, false, out.data(), lse.data(),
                                               block.device.data(), block_lse.data());
  merge_attention(params, stream.get());
  stream.synchronize();
  Check check(1e-5);
  const std::vector<float> got_out = out.copy_to_host();
  const std::vector<float> got_lse = lse.copy_to_host();
  for (int64_t r = 0; r < rows.lse_elements() && check.ok(); r += 997) {
    const double l = lse_values[r];
    const double bl = block_lse_values[r];
    const double m = std::max(l, bl);
    const double want = m + std::log(std::exp(l - m) + std::exp(bl - m));
    check.value(got_lse[r], want, 1.0 + std::abs(want), "lse[" + std::to_string(r) + "]");
    // Row r of lse is (b, h, i); its first output element is out[b, i, h, 0].
    const int64_t i = r % rows.q_len;
    const int64_t h = (r / rows.q_len) % rows.heads;
    const int64_t b = r / (rows.q_len * rows.heads);
    const int64_t o = ((b * rows.q_len + i) * rows.heads + h) * rows.head_dim;
    const double w_block = std::exp(bl - want);
    check.value(got_out[o], std::exp(l - want) * out_values[o] + w_block * block.values[o], 1.0,
                "out[" + std::to_string(o) + "]");
  }
  if (!all_finite(got_out)) {
    check.fail("NaN or infinity in out");
  }
  const Timing t = time_on_stream(stream.get(), 3, 20, [&] { merge_attention(params, stream.get()); });
  // Reads out (fp32) and block_out (bf16), writes out; the lse traffic is negligible.
  const double bytes = static_cast<double>(rows.out_elements()) * (4 + 2 + 4) + 12.0 * rows.lse_elements();
  const double gbps = bytes / (t.median_ms * 1e6);
  std::ostringstream shape;
  shape << "b" << rows.batch << " q" << rows.q_len << " h" << rows.heads << " d" << rows.head_dim;
  report.add({"merge (out, lse) bf16 block", shape.str(), t.median_ms, 0.0, gbps, gbps / ceilings.copy_gbps,
              check.summary()});
}

}  // namespace trainsim::kernels::bench
