#include "tests/calibrate/profile_compare.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

namespace trainsim::calibrate::testing {
namespace {

void same(double a, double e, const std::string& what) {
  EXPECT_LE(std::abs(a - e), 1e-12 * std::max(std::abs(a), std::abs(e))) << what << ": " << a << " vs " << e;
}

void same(const config::SampleSpread& a, const config::SampleSpread& e, const std::string& what) {
  same(a.min_s, e.min_s, what + ".min");
  same(a.p90_s, e.p90_s, what + ".p90");
  EXPECT_EQ(a.repetitions, e.repetitions) << what << ".repetitions";
}

}  // namespace

void expect_same_profile(const config::HardwareProfile& a, const config::HardwareProfile& e) {
  EXPECT_EQ(a.name, e.name);
  EXPECT_EQ(a.gpu.name, e.gpu.name);
  EXPECT_EQ(a.gpu.sm_count, e.gpu.sm_count);
  same(a.gpu.clock_hz, e.gpu.clock_hz, "gpu.clock");
  ASSERT_EQ(a.gpu.peak_flops_per_s.size(), e.gpu.peak_flops_per_s.size());
  for (const auto& [dtype, peak] : e.gpu.peak_flops_per_s) {
    ASSERT_EQ(a.gpu.peak_flops_per_s.count(dtype), 1u);
    same(a.gpu.peak_flops_per_s.at(dtype), peak, "gpu.peak_flops");
  }
  same(a.gpu.hbm_capacity_bytes, e.gpu.hbm_capacity_bytes, "gpu.hbm.capacity");
  same(a.gpu.hbm_bandwidth_bytes_per_s, e.gpu.hbm_bandwidth_bytes_per_s, "gpu.hbm.bandwidth");
  EXPECT_EQ(a.host_link.pcie_generation, e.host_link.pcie_generation);
  same(a.host_link.h2d_bandwidth_bytes_per_s, e.host_link.h2d_bandwidth_bytes_per_s, "host_link.h2d");
  same(a.host_link.d2h_bandwidth_bytes_per_s, e.host_link.d2h_bandwidth_bytes_per_s, "host_link.d2h");
  same(a.host_link.latency_s, e.host_link.latency_s, "host_link.latency");
  same(a.host_memory_bytes, e.host_memory_bytes, "host_memory");
  same(a.compute.gemm_efficiency, e.compute.gemm_efficiency, "gemm_efficiency");
  same(a.compute.gemm_efficiency_fp8, e.compute.gemm_efficiency_fp8, "gemm_efficiency_fp8");
  same(a.compute.attention_forward_efficiency, e.compute.attention_forward_efficiency, "attention_forward");
  same(a.compute.attention_backward_efficiency, e.compute.attention_backward_efficiency,
       "attention_backward");
  same(a.compute.memory_efficiency, e.compute.memory_efficiency, "memory_efficiency");
  same(a.compute.kernel_launch_s, e.compute.kernel_launch_s, "kernel_launch");
  same(a.compute.host_sync_s, e.compute.host_sync_s, "host_sync");
  same(a.compute.comm_compute_slowdown, e.compute.comm_compute_slowdown, "comm_compute_slowdown");
  EXPECT_EQ(a.compute.attention_kernel, e.compute.attention_kernel) << "attention_kernel";
  EXPECT_EQ(a.runtime_memory.has_value(), e.runtime_memory.has_value()) << "runtime_memory";
  if (a.runtime_memory && e.runtime_memory) {
    same(a.runtime_memory->context_bytes, e.runtime_memory->context_bytes, "runtime_memory.context");
    same(a.runtime_memory->collective_communicator_bytes, e.runtime_memory->collective_communicator_bytes,
         "runtime_memory.collective_communicator");
    same(a.runtime_memory->p2p_peer_in_node_bytes, e.runtime_memory->p2p_peer_in_node_bytes,
         "runtime_memory.p2p_peer_in_node");
    same(a.runtime_memory->p2p_peer_across_nodes_bytes, e.runtime_memory->p2p_peer_across_nodes_bytes,
         "runtime_memory.p2p_peer_across_nodes");
  }
  EXPECT_EQ(a.power.has_value(), e.power.has_value()) << "power";
  if (a.power && e.power) {
    same(a.power->limit_w, e.power->limit_w, "power.limit");
    same(a.power->idle_w, e.power->idle_w, "power.idle");
    same(a.power->compute_w, e.power->compute_w, "power.compute");
    same(a.power->memory_w, e.power->memory_w, "power.memory");
    same(a.power->communication_w, e.power->communication_w, "power.communication");
  }
  ASSERT_EQ(a.gemm_samples.size(), e.gemm_samples.size());
  for (size_t i = 0; i < e.gemm_samples.size(); ++i) {
    const auto& x = a.gemm_samples[i];
    const auto& y = e.gemm_samples[i];
    EXPECT_TRUE(x.dtype == y.dtype && x.m == y.m && x.n == y.n && x.k == y.k) << "gemm_samples[" << i << "]";
    same(x.duration_s, y.duration_s, "gemm_samples.time");
    same(x.spread, y.spread, "gemm_samples[" + std::to_string(i) + "]");
  }
  ASSERT_EQ(a.attention_samples.size(), e.attention_samples.size());
  for (size_t i = 0; i < e.attention_samples.size(); ++i) {
    const auto& x = a.attention_samples[i];
    const auto& y = e.attention_samples[i];
    EXPECT_TRUE(x.pass == y.pass && x.causal == y.causal && x.dtype == y.dtype && x.batch == y.batch &&
                x.heads == y.heads && x.kv_heads == y.kv_heads && x.q_len == y.q_len &&
                x.kv_len == y.kv_len && x.head_dim == y.head_dim)
        << "attention_samples[" << i << "]";
    same(x.duration_s, y.duration_s, "attention_samples.time");
    same(x.spread, y.spread, "attention_samples[" + std::to_string(i) + "]");
  }
  ASSERT_EQ(a.collective_samples.size(), e.collective_samples.size());
  for (size_t i = 0; i < e.collective_samples.size(); ++i) {
    const auto& x = a.collective_samples[i];
    const auto& y = e.collective_samples[i];
    EXPECT_TRUE(x.kind == y.kind && x.ranks == y.ranks && x.nodes == y.nodes && x.algorithm == y.algorithm)
        << "collective_samples[" << i << "]";
    same(x.bytes, y.bytes, "collective_samples.bytes");
    same(x.duration_s, y.duration_s, "collective_samples.time");
    same(x.spread, y.spread, "collective_samples[" + std::to_string(i) + "]");
  }
  ASSERT_EQ(a.collective_fits.size(), e.collective_fits.size());
  for (size_t i = 0; i < e.collective_fits.size(); ++i) {
    const auto& x = a.collective_fits[i];
    const auto& y = e.collective_fits[i];
    EXPECT_TRUE(x.kind == y.kind && x.ranks == y.ranks && x.nodes == y.nodes && x.algorithm == y.algorithm)
        << "collective_fits[" << i << "]";
    same(x.min_bytes, y.min_bytes, "collective_fits.min_bytes");
    same(x.max_bytes, y.max_bytes, "collective_fits.max_bytes");
    same(x.latency_s, y.latency_s, "collective_fits.latency");
    same(x.bus_bandwidth_bytes_per_s, y.bus_bandwidth_bytes_per_s, "collective_fits.bus_bandwidth");
  }
  ASSERT_EQ(a.copy_samples.size(), e.copy_samples.size());
  for (size_t i = 0; i < e.copy_samples.size(); ++i) {
    const auto& x = a.copy_samples[i];
    const auto& y = e.copy_samples[i];
    EXPECT_TRUE(x.direction == y.direction && x.concurrent_gpus == y.concurrent_gpus)
        << "copy_samples[" << i << "]";
    same(x.bytes, y.bytes, "copy_samples.bytes");
    same(x.duration_s, y.duration_s, "copy_samples.time");
    same(x.spread, y.spread, "copy_samples[" + std::to_string(i) + "]");
  }
  EXPECT_EQ(a.provenance.kind, e.provenance.kind);
  EXPECT_EQ(a.provenance.date, e.provenance.date);
  EXPECT_EQ(a.provenance.tool_version, e.provenance.tool_version);
  EXPECT_EQ(a.provenance.command, e.provenance.command);
  EXPECT_EQ(a.provenance.notes, e.provenance.notes);
  const config::SoftwareVersions& x = a.provenance.software;
  const config::SoftwareVersions& y = e.provenance.software;
  EXPECT_TRUE(x.driver == y.driver && x.cuda_runtime == y.cuda_runtime && x.blas == y.blas &&
              x.collectives == y.collectives && x.compiler == y.compiler &&
              x.attention_kernel == y.attention_kernel)
      << "provenance.software";
  EXPECT_EQ(a.provenance.host.cpu, e.provenance.host.cpu);
  EXPECT_EQ(a.provenance.host.name, e.provenance.host.name);
  EXPECT_EQ(a.sources, e.sources);
}

}  // namespace trainsim::calibrate::testing
