#include "tests/kernels/emulation/emulator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <numeric>
#include <random>
#include <type_traits>
#include <ucontext.h>
#include <vector>

#include "kernels/cuda/wgmma.cuh"

uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace trainsim::kernels::emulation {

namespace {

constexpr size_t kStackBytes = 256 * 1024;
constexpr size_t kSlotBytes = 64;

struct Copy {
  void* shared;
  const void* global;
  size_t bytes;
  bool valid;
};

struct Fiber {
  ucontext_t context{};
  std::unique_ptr<char[]> stack;
  uint3 index{};
  bool done = false;
  std::vector<Copy> open_group;
  std::deque<std::vector<Copy>> committed;
};

struct Barrier {
  int arrived = 0;
  uint64_t generation = 0;
};

struct Warp {
  Barrier barrier;
  // Double-buffered by generation parity: a lane can be at most one collective ahead of another.
  alignas(16) unsigned char slots[2][32][kSlotBytes];
};

struct Block {
  std::vector<Fiber> fibers;
  std::vector<int> order;  // permuted round-robin order
  std::vector<Warp> warps;
  Barrier block_barrier;
  std::vector<char> shared;
  ucontext_t scheduler{};
  int current = -1;
  const std::function<void()>* body = nullptr;
  std::string error;
  uint64_t progress = 0;
};

Block* g_block = nullptr;
std::vector<std::pair<const char*, size_t>> g_globals;

Fiber& current_fiber() { return g_block->fibers[g_block->current]; }

void switch_to(int next) {
  Block& block = *g_block;
  const int from = block.current;
  block.current = next;
  threadIdx = block.fibers[next].index;
  swapcontext(&block.fibers[from].context, &block.fibers[next].context);
}

// Runs another fiber; returns when this one is scheduled again.
void yield() {
  Block& block = *g_block;
  const int n = static_cast<int>(block.order.size());
  const int position = static_cast<int>(std::find(block.order.begin(), block.order.end(), block.current) -
                                        block.order.begin());
  for (int step = 1; step <= n; ++step) {
    const int candidate = block.order[(position + step) % n];
    if (!block.fibers[candidate].done && candidate != block.current) {
      switch_to(candidate);
      return;
    }
  }
  fail("deadlock: a thread waits at a barrier that no other live thread can reach");
}

void barrier_wait(Barrier& barrier, int count) {
  Block& block = *g_block;
  const uint64_t generation = barrier.generation;
  ++block.progress;
  if (++barrier.arrived == count) {
    barrier.arrived = 0;
    ++barrier.generation;
    return;
  }
  uint64_t seen = block.progress;
  int idle_yields = 0;
  while (barrier.generation == generation) {
    yield();
    if (block.progress == seen) {
      if (++idle_yields > 4 * static_cast<int>(block.fibers.size())) {
        fail("deadlock: a barrier never completes (divergent __syncthreads or warp collective?)");
      }
    } else {
      seen = block.progress;
      idle_yields = 0;
    }
  }
}

void fiber_entry() {
  (*g_block->body)();
  current_fiber().done = true;
  ++g_block->progress;
}

void perform(const std::vector<Copy>& group) {
  for (const Copy& copy : group) {
    if (copy.valid) {
      std::memcpy(copy.shared, copy.global, copy.bytes);
    } else {
      std::memset(copy.shared, 0, copy.bytes);
    }
  }
}

template <typename Element>
float to_float(uint16_t bits) {
  if constexpr (std::is_same_v<Element, __nv_bfloat16>) {
    __nv_bfloat16_raw raw;
    raw.x = bits;
    return __bfloat162float(__nv_bfloat16(raw));
  } else {
    __half_raw raw;
    raw.x = bits;
    return __half2float(__half(raw));
  }
}

uint16_t half_of(uint32_t reg, int half) {
  return static_cast<uint16_t>(half == 0 ? reg & 0xFFFFU : reg >> 16);
}

// Element (row, col) of 8x8 matrix `m` of an ldmatrix, whose rows start at rows[8m..8m+7].
uint16_t matrix_element(const std::array<const void*, 32>& rows, int m, int row, int col) {
  uint16_t bits;
  std::memcpy(&bits, static_cast<const char*>(rows[8 * m + row]) + 2 * col, 2);
  return bits;
}

void ldmatrix(uint32_t (&r)[4], const void* row, bool transpose) {
  check_shared(row, 16, "ldmatrix row");
  if (reinterpret_cast<uintptr_t>(row) % 16 != 0) {
    fail("ldmatrix: row address not 16-byte aligned");
  }
  std::array<const void*, 32> rows{};
  warp_exchange(&row, rows.data(), sizeof(row));
  const int lane = lane_id();
  for (int m = 0; m < 4; ++m) {
    uint16_t lo;
    uint16_t hi;
    if (transpose) {
      lo = matrix_element(rows, m, 2 * (lane % 4), lane / 4);
      hi = matrix_element(rows, m, 2 * (lane % 4) + 1, lane / 4);
    } else {
      lo = matrix_element(rows, m, lane / 4, 2 * (lane % 4));
      hi = matrix_element(rows, m, lane / 4, 2 * (lane % 4) + 1);
    }
    r[m] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
  }
}

struct MmaOperands {
  uint32_t a[4];
  uint32_t b[2];
};

template <typename Element>
void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  MmaOperands mine{};
  std::copy(a, a + 4, mine.a);
  std::copy(b, b + 2, mine.b);
  std::array<MmaOperands, 32> all{};
  warp_exchange(&mine, all.data(), sizeof(mine));
  // A (16x16): a0 (g, 2t..) a1 (g+8, 2t..) a2 (g, 2t+8..) a3 (g+8, 2t+8..); B (16x8): b0 (k=2t.., n=g)
  // b1 (k=2t+8.., n=g); lane = 4g + t.
  auto a_at = [&](int row, int k) {
    const int reg = (row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0);
    return to_float<Element>(half_of(all[(row % 8) * 4 + (k % 8) / 2].a[reg], k % 2));
  };
  auto b_at = [&](int k, int n) {
    return to_float<Element>(half_of(all[n * 4 + (k % 8) / 2].b[k >= 8 ? 1 : 0], k % 2));
  };
  const int lane = lane_id();
  for (int e = 0; e < 4; ++e) {
    const int row = lane / 4 + (e >= 2 ? 8 : 0);
    const int col = 2 * (lane % 4) + (e % 2);
    double sum = 0.0;
    for (int k = 0; k < 16; ++k) {
      sum += static_cast<double>(a_at(row, k)) * static_cast<double>(b_at(k, col));
    }
    d[e] = static_cast<float>(static_cast<double>(d[e]) + sum);
  }
}

// Decodes a 128-byte-swizzle descriptor (kernels/cuda/wgmma.cuh) and returns the element at
// (row, column) of its operand: K-major (row = M or N index, column = k) or MN-major (row = k,
// column = N index, < 64).
struct Descriptor {
  uint32_t start;
  uint32_t leading;
  uint32_t stride;
};

Descriptor decode(uint64_t desc) {
  if ((desc >> 62) != wgmma::kSwizzle128Mode || ((desc >> 49) & 7U) != 0) {
    fail("wgmma: only the 128-byte swizzle with matrix base offset 0 is emulated");
  }
  return {static_cast<uint32_t>(desc & 0x3FFFU) << 4, static_cast<uint32_t>((desc >> 16) & 0x3FFFU) << 4,
          static_cast<uint32_t>((desc >> 32) & 0x3FFFU) << 4};
}

template <typename Element>
float swizzled_element(uint32_t logical) {
  const uint32_t physical = logical ^ (((logical >> 7) & 7U) << 4);
  const char* p = shared_memory() + physical;
  check_shared(p, 2, "wgmma operand");
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return to_float<Element>(bits);
}

template <typename Element>
float k_major_at(uint64_t desc, int row, int k) {
  const Descriptor d = decode(desc);
  if (d.start % wgmma::kSwizzleBytes + 32 > static_cast<uint32_t>(wgmma::kSwizzleBytes)) {
    fail("wgmma: a K-major k16 step crosses the 128-byte swizzle row");
  }
  return swizzled_element<Element>(d.start + (row / 8) * d.stride + (row % 8) * wgmma::kSwizzleBytes + 2 * k);
}

template <typename Element>
float mn_major_at(uint64_t desc, int k, int column) {
  const Descriptor d = decode(desc);
  if (column >= 64 || d.start % wgmma::kSwizzleBytes != 0) {
    fail("wgmma: MN-major operands are emulated for N <= 64 starting at a row");
  }
  return swizzled_element<Element>(d.start + (k / 8) * d.stride + (k % 8) * wgmma::kSwizzleBytes +
                                   2 * column);
}

// Row (0..63 in the warpgroup's tile) and column of accumulator element e of chunk j of this thread.
int wgmma_row(int e) { return 16 * static_cast<int>(threadIdx.x / 32 % 4) + lane_id() / 4 + 8 * (e / 2); }
int wgmma_col(int j, int e) { return 8 * j + 2 * (lane_id() % 4) + e % 2; }

// d (64 x 8·kChunks) = a · b (+ d), both operands from shared memory, each K-major or MN-major.
template <typename Element, int kChunks>
void wgmma_ss(float (&d)[kChunks][4], uint64_t desc_a, uint64_t desc_b, bool accumulate, bool trans_a,
              bool trans_b) {
  for (int j = 0; j < kChunks; ++j) {
    for (int e = 0; e < 4; ++e) {
      const int row = wgmma_row(e);
      const int col = wgmma_col(j, e);
      double sum = accumulate ? static_cast<double>(d[j][e]) : 0.0;
      for (int k = 0; k < 16; ++k) {
        const float a = trans_a ? mn_major_at<Element>(desc_a, k, row) : k_major_at<Element>(desc_a, row, k);
        const float b = trans_b ? mn_major_at<Element>(desc_b, k, col) : k_major_at<Element>(desc_b, col, k);
        sum += static_cast<double>(a) * static_cast<double>(b);
      }
      d[j][e] = static_cast<float>(sum);
    }
  }
}

template <typename Element>
void wgmma_rs_mn(float (&d)[8][4], const uint32_t (&a)[4], uint64_t desc_b) {
  std::array<MmaOperands, 32> all{};
  MmaOperands mine{};
  std::copy(a, a + 4, mine.a);
  warp_exchange(&mine, all.data(), sizeof(mine));
  auto a_at = [&](int row, int k) {  // the mma.sync A layout over the warp's 16 rows
    const int reg = (row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0);
    return to_float<Element>(half_of(all[(row % 8) * 4 + (k % 8) / 2].a[reg], k % 2));
  };
  for (int j = 0; j < 8; ++j) {
    for (int e = 0; e < 4; ++e) {
      const int row = wgmma_row(e) % 16;
      const int col = wgmma_col(j, e);
      double sum = d[j][e];
      for (int k = 0; k < 16; ++k) {
        sum += static_cast<double>(a_at(row, k)) * static_cast<double>(mn_major_at<Element>(desc_b, k, col));
      }
      d[j][e] = static_cast<float>(sum);
    }
  }
}

}  // namespace

void register_global(const void* data, size_t bytes) {
  g_globals.emplace_back(static_cast<const char*>(data), bytes);
}

void clear_globals() { g_globals.clear(); }

void fail(const std::string& message) {
  if (g_block == nullptr || g_block->current < 0) {
    throw EmulationError(message);
  }
  const Fiber& fiber = current_fiber();
  g_block->error = "block (" + std::to_string(blockIdx.x) + "," + std::to_string(blockIdx.y) + "," +
                   std::to_string(blockIdx.z) + ") thread " + std::to_string(fiber.index.x) + ": " + message;
  swapcontext(&current_fiber().context, &g_block->scheduler);
  std::abort();  // never resumed
}

void syncthreads() { barrier_wait(g_block->block_barrier, static_cast<int>(g_block->fibers.size())); }

void warp_exchange(const void* mine, void* all, size_t bytes) {
  if (bytes > kSlotBytes) {
    fail("warp exchange too large");
  }
  Warp& warp = g_block->warps[threadIdx.x / 32];
  const int parity = static_cast<int>(warp.barrier.generation & 1U);
  std::memcpy(warp.slots[parity][lane_id()], mine, bytes);
  barrier_wait(warp.barrier, 32);
  for (int lane = 0; lane < 32; ++lane) {
    std::memcpy(static_cast<char*>(all) + lane * bytes, warp.slots[parity][lane], bytes);
  }
}

int lane_id() { return static_cast<int>(threadIdx.x % 32); }

char* shared_memory() { return g_block->shared.data(); }

void check_shared(const void* pointer, size_t bytes, const char* what) {
  const char* p = static_cast<const char*>(pointer);
  const char* base = g_block->shared.data();
  if (p < base || p + bytes > base + g_block->shared.size()) {
    fail(std::string(what) + ": shared address out of range (offset " + std::to_string(p - base) + ")");
  }
}

void check_global(const void* pointer, size_t bytes, const char* what) {
  const char* p = static_cast<const char*>(pointer);
  for (const auto& [base, size] : g_globals) {
    if (p >= base && p + bytes <= base + size) {
      return;
    }
  }
  fail(std::string(what) + ": global address outside every registered buffer");
}

void cp_async(void* shared, const void* global, size_t bytes, bool valid) {
  check_shared(shared, bytes, "cp.async destination");
  if (reinterpret_cast<uintptr_t>(shared) % bytes != 0 || reinterpret_cast<uintptr_t>(global) % bytes != 0) {
    fail("cp.async: misaligned address");
  }
  if (valid) {
    check_global(global, bytes, "cp.async source");
  }
  current_fiber().open_group.push_back({shared, global, bytes, valid});
}

void cp_async_commit() {
  Fiber& fiber = current_fiber();
  fiber.committed.push_back(std::move(fiber.open_group));
  fiber.open_group.clear();
}

void cp_async_wait(int pending) {
  Fiber& fiber = current_fiber();
  while (static_cast<int>(fiber.committed.size()) > pending) {
    perform(fiber.committed.front());
    fiber.committed.pop_front();
  }
}

void launch(dim3 grid, int threads, size_t smem_bytes, const std::function<void()>& body, uint32_t seed) {
  if (threads <= 0 || threads % 32 != 0) {
    throw EmulationError("emulated blocks must have a positive multiple of 32 threads");
  }
  gridDim = grid;
  blockDim = dim3(static_cast<unsigned>(threads), 1, 1);
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        Block block;
        block.fibers.resize(static_cast<size_t>(threads));
        block.warps.resize(static_cast<size_t>(threads / 32));
        block.shared.assign(smem_bytes, static_cast<char>(0xFF));
        block.body = &body;
        block.order.resize(static_cast<size_t>(threads));
        std::iota(block.order.begin(), block.order.end(), 0);
        std::mt19937 rng(seed + 7919U * (x + grid.x * (y + grid.y * z)));
        std::shuffle(block.order.begin(), block.order.end(), rng);
        blockIdx = uint3{x, y, z};
        g_block = &block;
        for (int t = 0; t < threads; ++t) {
          Fiber& fiber = block.fibers[t];
          fiber.index = uint3{static_cast<unsigned>(t), 0, 0};
          fiber.stack = std::make_unique<char[]>(kStackBytes);
          getcontext(&fiber.context);
          fiber.context.uc_stack.ss_sp = fiber.stack.get();
          fiber.context.uc_stack.ss_size = kStackBytes;
          fiber.context.uc_link = &block.scheduler;
          makecontext(&fiber.context, fiber_entry, 0);
        }
        bool any_alive = true;
        while (any_alive && block.error.empty()) {
          any_alive = false;
          for (const int t : block.order) {
            if (!block.fibers[t].done) {
              any_alive = true;
              block.current = t;
              threadIdx = block.fibers[t].index;
              swapcontext(&block.scheduler, &block.fibers[t].context);
              if (!block.error.empty()) {
                break;
              }
            }
          }
        }
        g_block = nullptr;
        if (!block.error.empty()) {
          throw EmulationError(block.error);
        }
      }
    }
  }
}

}  // namespace trainsim::kernels::emulation

void __syncthreads() { trainsim::kernels::emulation::syncthreads(); }

float __shfl_xor_sync(unsigned mask, float value, int lane_mask) {
  if (mask != 0xffffffffU) {
    trainsim::kernels::emulation::fail("__shfl_xor_sync: only full-warp masks are emulated");
  }
  std::array<float, 32> all{};
  trainsim::kernels::emulation::warp_exchange(&value, all.data(), sizeof(value));
  return all[trainsim::kernels::emulation::lane_id() ^ lane_mask];
}

float __shfl_sync(unsigned mask, float value, int source_lane) {
  if (mask != 0xffffffffU) {
    trainsim::kernels::emulation::fail("__shfl_sync: only full-warp masks are emulated");
  }
  std::array<float, 32> all{};
  trainsim::kernels::emulation::warp_exchange(&value, all.data(), sizeof(value));
  return all[source_lane];
}

float atomicAdd(float* address, float value) {
  trainsim::kernels::emulation::check_global(address, sizeof(float), "atomicAdd");
  const float old = *address;
  *address = old + value;
  return old;
}

namespace trainsim::kernels::ptx {

void ldmatrix_x4(uint32_t (&r)[4], const void* row) { emulation::ldmatrix(r, row, false); }
void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row) { emulation::ldmatrix(r, row, true); }

template <>
void mma_m16n8k16<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  emulation::mma<__nv_bfloat16>(d, a, b);
}
template <>
void mma_m16n8k16<__half>(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  emulation::mma<__half>(d, a, b);
}

float fast_exp2(float x) { return std::exp2(x); }

uint32_t shared_address(const void* pointer) {
  emulation::check_shared(pointer, 0, "shared address");
  return static_cast<uint32_t>(static_cast<const char*>(pointer) - emulation::shared_memory());
}

}  // namespace trainsim::kernels::ptx

namespace trainsim::kernels::wgmma {

template <>
void mma_m64n128k16_ss<__nv_bfloat16>(float (&d)[16][4], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  emulation::wgmma_ss<__nv_bfloat16>(d, desc_a, desc_b, accumulate, false, false);
}
template <>
void mma_m64n128k16_ss<__half>(float (&d)[16][4], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  emulation::wgmma_ss<__half>(d, desc_a, desc_b, accumulate, false, false);
}
template <typename Element, bool kTransA, bool kTransB>
void mma_m64n64k16_ss(float (&d)[8][4], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  emulation::wgmma_ss<Element>(d, desc_a, desc_b, accumulate, kTransA, kTransB);
}
template void mma_m64n64k16_ss<__nv_bfloat16, false, false>(float (&)[8][4], uint64_t, uint64_t, bool);
template void mma_m64n64k16_ss<__half, false, false>(float (&)[8][4], uint64_t, uint64_t, bool);
template void mma_m64n64k16_ss<__nv_bfloat16, true, true>(float (&)[8][4], uint64_t, uint64_t, bool);
template void mma_m64n64k16_ss<__half, true, true>(float (&)[8][4], uint64_t, uint64_t, bool);
template <>
void mma_m64n64k16_rs_mn_tile<__nv_bfloat16>(float (&d)[8][4], const uint32_t (&a)[4], uint64_t desc_b) {
  emulation::wgmma_rs_mn<__nv_bfloat16>(d, a, desc_b);
}
template <>
void mma_m64n64k16_rs_mn_tile<__half>(float (&d)[8][4], const uint32_t (&a)[4], uint64_t desc_b) {
  emulation::wgmma_rs_mn<__half>(d, a, desc_b);
}

}  // namespace trainsim::kernels::wgmma
