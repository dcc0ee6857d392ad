// Hard limits on inputs that are syntactically valid but absurd. Each would otherwise exhaust the
// host's memory or keep the simulator busy for days (or overflow the integer arithmetic of shapes
// and counts); the loaders refuse them up front with a located error that names the limit and says
// why. Each limit sits far above every published training run.
#ifndef TRAINSIM_SIM_CONFIG_LIMITS_H_
#define TRAINSIM_SIM_CONFIG_LIMITS_H_

#include <cstdint>

namespace trainsim::config {

// Bytes of one input file. Shipped scenarios and topologies are a few KiB, measured profiles a few
// hundred; the loader reads a file whole, so a stray multi-gigabyte file would exhaust memory.
inline constexpr int64_t kMaxInputFileBytes = int64_t{64} << 20;

// GPUs of a topology, and of a scenario's cluster. The platform holds every GPU, NIC, switch and
// link of the topology (SimGrid hosts and links included), a few KiB each; 2^20 GPUs is several
// times the largest cluster built so far.
inline constexpr int64_t kMaxGpus = int64_t{1} << 20;

// Tokens of one sequence (model.seq_len). Attention FLOPs and score-matrix sizes grow with its
// square; 2^30 keeps those exact in 64-bit counts and is 100 times the longest published context.
inline constexpr int64_t kMaxSeqLenTokens = int64_t{1} << 30;

// FPDT chunks per sequence (seq_len / fpdt.chunk_tokens). The workload plays the u(u+1)/2 causal
// attention blocks of every layer, so graphs grow with the square of the chunk count: 32 chunks
// (the 2Mi-token recipe) simulate in seconds, 128 in about a minute with 2 GiB, 512 would need tens
// of GiB.
inline constexpr int64_t kMaxFpdtChunks = 128;

// Sequences per iteration (training.global_batch, hence micro_batch): 2^30 sequences of at most
// kMaxSeqLenTokens tokens keep token counts within 64 bits.
inline constexpr int64_t kMaxGlobalBatch = int64_t{1} << 30;

// Each dimension of a model (layers, hidden, heads, kv_heads, head_dim, ffn_hidden, vocab). Parameter
// and FLOP counts multiply three of them, which stays within 64 bits below 2^20 each; the largest
// published models have 25,600 hidden, 160 heads, 128 layers and a 256Ki vocabulary.
inline constexpr int64_t kMaxModelDimension = int64_t{1} << 20;

// Bandwidth of one link, each direction, in bytes/s: 10^15 (8 Pb/s). A fabric trunk counts the
// cables of its uplink bandwidth in 32-bit integers; the fastest links today (NVLink 5, 1.6 Tb/s
// NICs) are 1,000 times below.
inline constexpr double kMaxLinkBandwidthBytesPerS = 1e15;

// Cables of a fabric whose routing picks cables (ecmp, d-mod-k), where each is a link of the
// platform (a few KiB each, like a GPU's): 2^22 is what kMaxGpus GPUs with one NIC each need on a
// non-blocking three-level tree.
inline constexpr int64_t kMaxFabricCables = int64_t{1} << 22;

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_LIMITS_H_
