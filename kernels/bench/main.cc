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
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <cuda_fp8.h>

#include "kernels/attention/attention_launch.h"
#include "kernels/bench/report.h"
#include "kernels/bench/tensors.h"
#include "kernels/bench/timing.h"
#include "kernels/bench/verify.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/pinned_buffer.h"
#include "kernels/cuda/stream.h"
#include "kernels/device_query.h"
#include "kernels/fpdt/pipeline.h"
#include "kernels/fpdt/sequence_io.h"
#include "kernels/gemm/gemm.h"
#include "kernels/nccl/communicator.h"
#include "kernels/reference/attention.h"

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

struct Ceilings {
  double gemm_tflops = 0.0;
  double copy_gbps = 0.0;
};

constexpr double kBf16Tolerance = 1e-2;
constexpr double kFp16Tolerance = 2e-3;

double tolerance(DataType type) { return type == DataType::kBFloat16 ? kBf16Tolerance : kFp16Tolerance; }

std::string describe(const AttentionShape& s, bool causal) {
  std::ostringstream out;
  out << "b" << s.batch << " q" << s.q_len << " kv" << s.kv_len << " h" << s.heads << "/" << s.kv_heads
      << " d" << s.head_dim << (causal ? " causal" : " full");
  return out.str();
}

double tflops(double flops, double ms) { return flops / (ms * 1e9); }

// The GEMM ceiling: 8192^3 bf16 through cuBLASLt, with a spot check of its result.
double measure_gemm_ceiling(Report& report, uint64_t seed) {
  const GemmShape shape{8192, 8192, 8192, false, true};
  const Tensor16 a = random_tensor16(shape.a_elements(), DataType::kBFloat16, seed);
  const Tensor16 b = random_tensor16(shape.b_elements(), DataType::kBFloat16, seed + 1);
  DeviceBuffer<uint16_t> d(static_cast<size_t>(shape.c_elements()));
  BlasLt blas;
  GemmPlan plan(blas, shape, {DataType::kBFloat16, DataType::kBFloat16});
  Stream stream;
  d.fill_bytes_async(0xFF, stream.get());
  plan.run(a.device.data(), b.device.data(), nullptr, d.data(), 1.0F, 0.0F, stream.get());
  stream.synchronize();
  const Check check =
      check_gemm(shape, a.values, b.values, download16(d.data(), shape.c_elements(), DataType::kBFloat16), 16,
                 seed, kBf16Tolerance);
  const Timing t = time_on_stream(stream.get(), 5, 20, [&] {
    plan.run(a.device.data(), b.device.data(), nullptr, d.data(), 1.0F, 0.0F, stream.get());
  });
  const double rate = tflops(shape.flops(), t.median_ms);
  report.add(
      {"ceiling: cuBLASLt GEMM bf16", "8192x8192x8192 (X·Wᵀ)", t.median_ms, rate, 0.0, 1.0, check.summary()});
  return rate;
}

// The bandwidth ceiling: a 2 GiB device-to-device copy, counting bytes read and written.
double measure_copy_ceiling(Report& report) {
  const size_t bytes = size_t{1} << 31;
  DeviceBuffer<std::byte> src(bytes), dst(bytes);
  Stream stream;
  const Timing t = time_on_stream(stream.get(), 3, 20, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
  });
  const double gbps = 2.0 * static_cast<double>(bytes) / (t.median_ms * 1e6);
  report.add({"ceiling: device copy", "2 GiB D2D (read + write)", t.median_ms, 0.0, gbps, 1.0, "skipped"});
  return gbps;
}

// Pinned host <-> device bandwidth, what FPDT's offload rides on (no ceiling fraction).
void measure_host_links(Report& report) {
  const size_t bytes = size_t{1} << 30;
  PinnedBuffer<std::byte> host(bytes);
  DeviceBuffer<std::byte> device(bytes);
  Stream stream;
  for (const bool to_device : {true, false}) {
    const Timing t = time_on_stream(stream.get(), 1, 5, [&] {
      CUDA_CHECK(cudaMemcpyAsync(to_device ? static_cast<void*>(device.data()) : host.data(),
                                 to_device ? static_cast<const void*>(host.data()) : device.data(), bytes,
                                 cudaMemcpyDefault, stream.get()));
    });
    report.add({to_device ? "pinned H2D copy" : "pinned D2H copy", "1 GiB", t.median_ms, 0.0,
                static_cast<double>(bytes) / (t.median_ms * 1e6), 0.0, "skipped"});
  }
}

void bench_attention(Report& report, const Ceilings& ceilings, const AttentionShape& s, bool causal,
                     DataType type, bool backward, int runs, uint64_t seed,
                     AttentionKernel kernel = AttentionKernel::kMmaSync) {
  const AttentionOptions options{causal, std::nullopt};
  const Tensor16 q = random_tensor16(s.q_elements(), type, seed);
  const Tensor16 k = random_tensor16(s.kv_elements(), type, seed + 1);
  const Tensor16 v = random_tensor16(s.kv_elements(), type, seed + 2);
  DeviceBuffer<uint16_t> out(static_cast<size_t>(s.q_elements()));
  DeviceBuffer<float> lse(static_cast<size_t>(s.lse_elements()));
  Stream stream;
  out.fill_bytes_async(0xFF, stream.get());
  lse.fill_bytes_async(0xFF, stream.get());
  const AttentionFwdParams fwd = make_forward_params(s, options, type, q.device.data(), k.device.data(),
                                                     v.device.data(), out.data(), lse.data());
  attention_forward(fwd, stream.get(), kernel);
  stream.synchronize();
  const std::vector<float> out_values = download16(out.data(), s.q_elements(), type);
  const std::vector<float> lse_values = lse.copy_to_host();
  const std::string name = std::string(backward ? "attention backward " : "attention forward ") +
                           (kernel == AttentionKernel::kWgmma ? "wgmma " : "") + name_of(type);
  if (!backward) {
    const Check check = check_forward(s, options, {q.values, k.values, v.values}, out_values, lse_values, 6,
                                      seed, tolerance(type));
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
  const Check check =
      check_backward(s, options, {q.values, k.values, v.values, out_values, lse_values, dout.values},
                     dq.copy_to_host(), dk.copy_to_host(), dv.copy_to_host(), 3, seed, tolerance(type));
  const Timing t =
      time_on_stream(stream.get(), 1, runs, [&] { attention_backward(bwd, stream.get(), kernel); });
  const double rate = tflops(attention_backward_flops(s, causal), t.median_ms);
  report.add(
      {name, describe(s, causal), t.median_ms, rate, 0.0, rate / ceilings.gemm_tflops, check.summary()});
}

// "ok", or the summary of the first failed check.
std::string first_failure(std::initializer_list<Check> checks) {
  for (const Check& c : checks) {
    if (!c.ok()) return c.summary();
  }
  return "ok";
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
        const Tensor16 q = random_tensor16(s.q_elements(), type, seed++);
        const Tensor16 k = random_tensor16(s.kv_elements(), type, seed++);
        const Tensor16 v = random_tensor16(s.kv_elements(), type, seed++);
        const Tensor16 dout = random_tensor16(s.q_elements(), type, seed++);
        DeviceBuffer<uint16_t> out(static_cast<size_t>(s.q_elements()));
        DeviceBuffer<float> lse(static_cast<size_t>(s.lse_elements()));
        Stream stream;
        out.fill_bytes_async(0xFF, stream.get());
        lse.fill_bytes_async(0xFF, stream.get());
        const AttentionFwdParams fwd = make_forward_params(s, options, type, q.device.data(), k.device.data(),
                                                           v.device.data(), out.data(), lse.data());
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
        const std::vector<float> out_got = download16(out.data(), s.q_elements(), type);
        const std::vector<float> lse_got = lse.copy_to_host();
        std::vector<float> out_ref(out_got.size()), lse_ref(lse_got.size());
        reference::attention_forward<float>(s, options, {q.values, k.values, v.values}, out_ref, lse_ref);
        // The backward reference takes the kernel's own out and lse, as the kernel does.
        std::vector<float> dq_ref(static_cast<size_t>(s.q_elements())),
            dk_ref(static_cast<size_t>(s.kv_elements())), dv_ref(static_cast<size_t>(s.kv_elements()));
        reference::attention_backward<float>(s, options,
                                             {q.values, k.values, v.values, out_got, lse_got, dout.values},
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

// Every collective over the local GPUs (one rank each), checked against its definition.
void check_nccl(Report& report) {
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  std::vector<int> ids(static_cast<size_t>(devices));
  for (int d = 0; d < devices; ++d) {
    ids[d] = d;
  }
  std::vector<Communicator> comms = Communicator::create_local(ids);
  const size_t n = comms.size();
  const size_t count = 1024 * n;
  std::vector<Stream> streams;
  std::vector<DeviceBuffer<float>> send, reduced, gathered, exchanged;
  for (Communicator& comm : comms) {
    const DeviceGuard guard(comm.device());
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) {
      values[i] = static_cast<float>(comm.rank() * 100000 + static_cast<int>(i));
    }
    streams.emplace_back();
    send.emplace_back(count);
    send.back().copy_from_host(values);
    reduced.emplace_back(count);
    gathered.emplace_back(count * n);
    exchanged.emplace_back(count);
  }
  NcclGroup group;
  for (size_t r = 0; r < n; ++r) {
    comms[r].all_reduce(send[r].data(), reduced[r].data(), count, DataType::kFloat32, ReduceOp::kSum,
                        streams[r].get());
    comms[r].all_gather(send[r].data(), gathered[r].data(), count, DataType::kFloat32, streams[r].get());
    comms[r].all_to_all(send[r].data(), exchanged[r].data(), count / n, DataType::kFloat32, streams[r].get());
  }
  group.end();
  Check check(0.0);
  for (size_t r = 0; r < n; ++r) {
    streams[r].synchronize();
    const std::vector<float> sum = reduced[r].copy_to_host();
    const std::vector<float> all = gathered[r].copy_to_host();
    const std::vector<float> swapped = exchanged[r].copy_to_host();
    for (size_t i = 0; i < count; i += 97) {
      check.value(sum[i], 100000.0 * n * (n - 1) / 2 + static_cast<double>(n * i), 1.0, "all_reduce");
      const size_t source = i / (count / n);
      check.value(swapped[i], source * 100000.0 + static_cast<double>(r * (count / n) + i % (count / n)), 1.0,
                  "all_to_all");
    }
    for (size_t i = 0; i < count * n; i += 97) {
      check.value(all[i], (i / count) * 100000.0 + static_cast<double>(i % count), 1.0, "all_gather");
    }
  }
  barrier_all(comms, [&] {
    std::vector<cudaStream_t> handles;
    for (const Stream& s : streams) {
      handles.push_back(s.get());
    }
    return handles;
  }());
  report.add({"NCCL all_reduce, all_gather, all_to_all, barrier", std::to_string(n) + " local GPU(s)", 0.0,
              0.0, 0.0, 0.0, check.summary()});
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

void bench_gemm(Report& report, const Ceilings& ceilings, const std::string& name, const GemmShape& shape,
                const GemmTypes& types, uint64_t seed) {
  BlasLt blas;
  Stream stream;
  DeviceBuffer<uint16_t> d(static_cast<size_t>(shape.c_elements()));
  std::vector<float> a_values;
  std::vector<float> b_values;
  DeviceBuffer<std::byte> a;
  DeviceBuffer<std::byte> b;
  if (types.input == DataType::kFloat8E4M3) {
    auto make = [](int64_t count, uint64_t s, std::vector<float>& values) {
      const Tensor16 source = random_tensor16(count, DataType::kBFloat16, s);
      std::vector<__nv_fp8_e4m3> bits(source.values.size());
      values.resize(bits.size());
      for (size_t i = 0; i < bits.size(); ++i) {
        bits[i] = __nv_fp8_e4m3(source.values[i]);
        values[i] = static_cast<float>(bits[i]);
      }
      DeviceBuffer<std::byte> buffer(bits.size());
      CUDA_CHECK(cudaMemcpy(buffer.data(), bits.data(), bits.size(), cudaMemcpyHostToDevice));
      return buffer;
    };
    a = make(shape.a_elements(), seed, a_values);
    b = make(shape.b_elements(), seed + 1, b_values);
  } else {
    auto make = [&](int64_t count, uint64_t s, std::vector<float>& values) {
      Tensor16 t = random_tensor16(count, types.input, s);
      values = std::move(t.values);
      DeviceBuffer<std::byte> buffer(static_cast<size_t>(count) * 2);
      CUDA_CHECK(cudaMemcpy(buffer.data(), t.device.data(), buffer.bytes(), cudaMemcpyDeviceToDevice));
      return buffer;
    };
    a = make(shape.a_elements(), seed, a_values);
    b = make(shape.b_elements(), seed + 1, b_values);
  }
  GemmPlan plan(blas, shape, types);
  d.fill_bytes_async(0xFF, stream.get());
  plan.run(a.data(), b.data(), nullptr, d.data(), 1.0F, 0.0F, stream.get());
  stream.synchronize();
  const Check check = check_gemm(shape, a_values, b_values,
                                 download16(d.data(), shape.c_elements(), types.output), 16, seed, 1e-2);
  const Timing t = time_on_stream(stream.get(), 3, 10, [&] {
    plan.run(a.data(), b.data(), nullptr, d.data(), 1.0F, 0.0F, stream.get());
  });
  const double rate = tflops(shape.flops(), t.median_ms);
  std::ostringstream desc;
  desc << shape.m << "x" << shape.n << "x" << shape.k << " " << name_of(types.input) << "->"
       << name_of(types.output);
  report.add(
      {"GEMM " + name, desc.str(), t.median_ms, rate, 0.0, rate / ceilings.gemm_tflops, check.summary()});
}

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
