// The FPDT loop the calibration times (kernels/fpdt, real) is the loop the simulation prices
// (sim/workload/fpdt.cc): for one layer's attention, the host copies (direction, bytes, copy queue)
// and attention kernels (pass, block shape, mask) the pipeline issues on the fake CUDA runtime are,
// in issue order, the copy and attention ops the workload emits for the same shape. The layer input's
// offload and fetches belong to the caller of the pipeline and are left out on both sides.
#include <cstdint>
#include <ostream>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/fpdt/pipeline.h"
#include "kernels/fpdt/sequence_io.h"
#include "sim/config/presets.h"
#include "sim/workload/builder.h"
#include "sim/workload/plan.h"
#include "tests/kernels/fake_cuda/fake_runtime.h"

namespace trainsim::kernels::fake_cuda {
void PrintTo(const Issued& x, std::ostream* os) {
  static constexpr const char* kKinds[] = {"D2H", "H2D", "attention forward", "attention backward"};
  *os << kKinds[static_cast<int>(x.kind)] << " on stream " << x.stream;
  if (x.bytes > 0) *os << " of " << x.bytes << " B";
  if (x.q_len > 0) {
    *os << " b" << x.batch << " h" << x.heads << "/" << x.kv_heads << " q" << x.q_len << " kv" << x.kv_len
        << " d" << x.head_dim << (x.causal ? " causal" : " full");
  }
}
}  // namespace trainsim::kernels::fake_cuda

namespace trainsim::kernels {
namespace {

using fake_cuda::Issued;

constexpr int64_t kChunkTokens = 64;  // global; 32 local tokens on each of the 2 ranks
constexpr int64_t kRanks = 2;

// Llama 3 8B's attention (32 query heads, 8 key/value heads of 128) on FPDT over 2 ranks, one layer.
config::Scenario one_layer(int64_t chunks, bool offload) {
  config::Scenario s;
  s.name = "fpdt-loop";
  s.model = config::find_model_preset("llama3-8b")->model;
  s.model.layers = 1;
  s.model.seq_len = chunks * kChunkTokens;
  s.model.attention = config::AttentionKernel::kFused;
  s.training.global_batch = 1;
  s.training.micro_batch = 1;
  s.parallelism.sp = kRanks;
  s.parallelism.sequence_parallel = config::SequenceParallel::kFpdt;
  s.parallelism.fpdt.chunk_tokens = kChunkTokens;
  s.parallelism.fpdt.offload = offload;
  s.cluster.gpus = kRanks;
  s.cluster.topology.node.gpus = 8;
  return s;
}

// The attention's copies and kernels in layer 0 of rank 0's graph, on the pipeline's streams
// (compute, offload, general are created in that order after `base`).
std::vector<Issued> simulated(const config::Scenario& s, uint64_t base) {
  const workload::ParallelPlan plan = workload::make_plan(s);
  const workload::Graph graph = workload::build_rank_graph(s, plan, 0);
  std::vector<Issued> out;
  for (const workload::Op& op : graph.ops()) {
    if (op.layer != 0 || (op.phase != workload::Phase::kForward && op.phase != workload::Phase::kBackward)) {
      continue;
    }
    if (op.kind == workload::OpKind::kAttentionForward || op.kind == workload::OpKind::kAttentionBackward) {
      const workload::AttentionShape& a = op.attention;
      out.push_back({op.kind == workload::OpKind::kAttentionForward ? Issued::Kind::kAttentionForward
                                                                    : Issued::Kind::kAttentionBackward,
                     base + 1, 0, a.batch, a.heads, a.kv_heads, a.q_len, a.kv_len, a.head_dim, a.causal});
    } else if (op.kind == workload::OpKind::kCopy && op.label != workload::OpLabel::kLayerInput) {
      EXPECT_TRUE(op.stream == workload::Stream::kCopy || op.stream == workload::Stream::kCopyAux)
          << workload::op_name(op);
      out.push_back(
          {op.copy.direction == workload::CopyDirection::kDeviceToHost ? Issued::Kind::kCopyToHost
                                                                       : Issued::Kind::kCopyToDevice,
           base + (op.stream == workload::Stream::kCopy ? 2U : 3U), static_cast<int64_t>(op.bytes)});
    }
  }
  return out;
}

// What the pipeline issues for one forward and backward of the same shape.
std::vector<Issued> issued(const config::Scenario& s, FpdtSync sync) {
  const config::Model& m = s.model;
  FpdtShape shape;
  shape.batch = s.training.micro_batch;
  shape.heads = m.heads / kRanks;
  shape.kv_heads = m.kv_heads / kRanks;
  shape.head_dim = m.head_dim;
  shape.chunk_tokens.assign(static_cast<size_t>(m.seq_len / kChunkTokens), kChunkTokens);
  FpdtOptions options;
  options.offload = s.parallelism.fpdt.offload;
  options.sync = sync;
  DeviceSequenceIo io(shape, options.dtype);
  FpdtAttention pipeline(shape, options);
  fake_cuda::reset(1);  // the log starts here, after the buffers' set-up
  pipeline.forward(io);
  pipeline.backward(io);
  pipeline.synchronize();
  return fake_cuda::issued();
}

TEST(FpdtLoop, IssuesTheCopiesAndKernelsTheWorkloadPrices) {
  for (const bool offload : {true, false}) {
    for (const int64_t chunks : {1, 2, 3, 4}) {
      // DeepSpeed runs one chunk without offloading (_FPDTGPUAttentionImpl_), as the workload does.
      if (offload && chunks == 1) continue;
      for (const FpdtSync sync : {FpdtSync::kEvents, FpdtSync::kHostSyncs}) {
        SCOPED_TRACE(::testing::Message() << "offload " << offload << ", " << chunks << " chunks, "
                                          << (sync == FpdtSync::kEvents ? "events" : "host syncs"));
        const config::Scenario s = one_layer(chunks, offload);
        const uint64_t base = fake_cuda::streams_created();
        const std::vector<Issued> real = issued(s, sync);
        const std::vector<Issued> priced = simulated(s, base);
        ASSERT_FALSE(priced.empty());
        EXPECT_EQ(real, priced);
      }
    }
  }
}

}  // namespace
}  // namespace trainsim::kernels
