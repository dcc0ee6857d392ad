#include "kernels/fpdt/pipeline.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attention/attention_launch.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/convert.h"

namespace trainsim::kernels {

namespace {

std::vector<int64_t> chunk_elements(const FpdtShape& shape, int64_t per_token) {
  std::vector<int64_t> elements;
  for (const int64_t tokens : shape.chunk_tokens) {
    elements.push_back(shape.batch * tokens * per_token);
  }
  return elements;
}

template <typename T>
DeviceBuffer<T> device_buffer(size_t count, size_t& total) {
  total += count * sizeof(T);
  return DeviceBuffer<T>(count);
}

}  // namespace

FpdtAttention::FpdtAttention(const FpdtShape& shape, const FpdtOptions& options)
    : shape_(shape), options_(options), element_bytes_(bytes_of(options.dtype)) {
  validate(shape);
  max_chunk_ = *std::max_element(shape.chunk_tokens.begin(), shape.chunk_tokens.end());
  if (options.dtype != DataType::kBFloat16 && options.dtype != DataType::kFloat16) {
    throw std::invalid_argument(std::string("FPDT: dtype ") + name_of(options.dtype) +
                                " is not bf16 or fp16");
  }
  if (shape.head_dim != 64 && shape.head_dim != 128) {
    throw std::invalid_argument("FPDT: head_dim must be 64 or 128");
  }
  check_available(options.attention_kernel);

  const int64_t q_width = shape.heads * shape.head_dim;
  const int64_t kv_width = shape.kv_heads * shape.head_dim;
  const MemoryLocation location = options.offload ? MemoryLocation::kPinnedHost : MemoryLocation::kDevice;
  q_store_ = ChunkStore(chunk_elements(shape, q_width), element_bytes_, location);
  k_store_ = ChunkStore(chunk_elements(shape, kv_width), element_bytes_, location);
  v_store_ = ChunkStore(chunk_elements(shape, kv_width), element_bytes_, location);
  out_store_ = ChunkStore(chunk_elements(shape, q_width), element_bytes_, location);
  lse_store_ = ChunkStore(chunk_elements(shape, shape.heads), sizeof(float), location);
  dout_store_ = ChunkStore(chunk_elements(shape, q_width), element_bytes_, location);
  dq_store_ = ChunkStore(chunk_elements(shape, q_width), sizeof(float), location);
  const size_t stores = q_store_.total_bytes() + k_store_.total_bytes() + v_store_.total_bytes() +
                        out_store_.total_bytes() + lse_store_.total_bytes() + dout_store_.total_bytes() +
                        dq_store_.total_bytes();
  (options.offload ? pinned_bytes_ : device_bytes_) += stores;

  const auto q_elements = static_cast<size_t>(shape.batch * max_chunk_ * q_width);
  const auto kv_elements = static_cast<size_t>(shape.batch * max_chunk_ * kv_width);
  const auto lse_elements = static_cast<size_t>(shape.batch * max_chunk_ * shape.heads);
  size_t& dev = device_bytes_;
  block_out_ = device_buffer<std::byte>(q_elements * element_bytes_, dev);
  block_lse_ = device_buffer<float>(lse_elements, dev);
  out_acc_ = device_buffer<float>(q_elements, dev);
  dk_acc_ = device_buffer<float>(kv_elements, dev);
  dv_acc_ = device_buffer<float>(kv_elements, dev);
  delta_ = device_buffer<float>(lse_elements, dev);
  dq_elem_ = device_buffer<std::byte>(q_elements * element_bytes_, dev);
  dk_elem_ = device_buffer<std::byte>(kv_elements * element_bytes_, dev);
  dv_elem_ = device_buffer<std::byte>(kv_elements * element_bytes_, dev);
  if (options.offload) {
    fwd_q_ = device_buffer<std::byte>(q_elements * element_bytes_, dev);
    for (KvSlot& slot : fwd_kv_) {
      slot.k = device_buffer<std::byte>(kv_elements * element_bytes_, dev);
      slot.v = device_buffer<std::byte>(kv_elements * element_bytes_, dev);
    }
    for (int s = 0; s < 2; ++s) {
      out_elem_[s] = device_buffer<std::byte>(q_elements * element_bytes_, dev);
      lse_acc_[s] = device_buffer<float>(lse_elements, dev);
      QuerySlot& slot = query_slots_[s];
      slot.q = device_buffer<std::byte>(q_elements * element_bytes_, dev);
      slot.out = device_buffer<std::byte>(q_elements * element_bytes_, dev);
      slot.dout = device_buffer<std::byte>(q_elements * element_bytes_, dev);
      slot.lse = device_buffer<float>(lse_elements, dev);
      slot.dq = device_buffer<float>(q_elements, dev);
      bwd_kv_[s].k = device_buffer<std::byte>(kv_elements * element_bytes_, dev);
      bwd_kv_[s].v = device_buffer<std::byte>(kv_elements * element_bytes_, dev);
    }
    dq_done_ = device_buffer<float>(q_elements, dev);
    dq_zeros_ = PinnedBuffer<float>(q_elements);
    std::fill(dq_zeros_.data(), dq_zeros_.data() + q_elements, 0.0F);
    pinned_bytes_ += dq_zeros_.bytes();
  }
}

size_t FpdtAttention::q_chunk_bytes(int64_t chunk) const {
  return static_cast<size_t>(shape_.batch * shape_.chunk_tokens[chunk] * shape_.heads * shape_.head_dim) *
         element_bytes_;
}

size_t FpdtAttention::kv_chunk_bytes(int64_t chunk) const {
  return static_cast<size_t>(shape_.batch * shape_.chunk_tokens[chunk] * shape_.kv_heads * shape_.head_dim) *
         element_bytes_;
}

size_t FpdtAttention::lse_chunk_bytes(int64_t chunk) const {
  return static_cast<size_t>(shape_.batch * shape_.heads * shape_.chunk_tokens[chunk]) * sizeof(float);
}

void FpdtAttention::copy(void* dst, const void* src, size_t bytes, const Stream& stream) const {
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.get()));
}

// DeepSpeed's compute_stream.wait_stream(offload_stream); compute_stream.synchronize().
void FpdtAttention::host_sync() {
  offload_mark_.record(offload_.get());
  compute_.wait(offload_mark_);
  compute_.synchronize();
}

void FpdtAttention::join_copy_streams() {
  offload_mark_.record(offload_.get());
  compute_.wait(offload_mark_);
  general_mark_.record(general_.get());
  compute_.wait(general_mark_);
}

FpdtAttention::KvSlot& FpdtAttention::slot_holding(int64_t chunk) {
  for (KvSlot& slot : fwd_kv_) {
    if (slot.chunk == chunk) {
      return slot;
    }
  }
  throw std::logic_error("FPDT pipeline: key/value chunk " + std::to_string(chunk) + " was not prefetched");
}

FpdtAttention::KvSlot& FpdtAttention::free_slot(const KvSlot* keep_a, const KvSlot* keep_b) {
  for (KvSlot& slot : fwd_kv_) {
    if (&slot != keep_a && &slot != keep_b) {
      return slot;
    }
  }
  throw std::logic_error("FPDT pipeline: no free key/value slot");
}

// H2D of K_chunk, V_chunk on the offload stream, once the slot's previous reader is done.
void FpdtAttention::prefetch_kv(int64_t chunk, KvSlot& slot) {
  offload_.wait(slot.released);
  copy(slot.k.data(), k_store_.chunk(chunk), kv_chunk_bytes(chunk), offload_);
  copy(slot.v.data(), v_store_.chunk(chunk), kv_chunk_bytes(chunk), offload_);
  slot.chunk = chunk;
  slot.ready.record(offload_.get());
}

// The end of the forward brings q, k, v, out, lse of chunk 0 back for the backward, in that order (A4).
void FpdtAttention::prefetch_for_backward() {
  QuerySlot& slot = query_slots_[0];
  KvSlot& kv = bwd_kv_[0];
  offload_.wait(output_saved_[0]);
  offload_.wait(slot.released);
  offload_.wait(kv.released);
  copy(slot.q.data(), q_store_.chunk(0), q_chunk_bytes(0), offload_);
  copy(kv.k.data(), k_store_.chunk(0), kv_chunk_bytes(0), offload_);
  copy(kv.v.data(), v_store_.chunk(0), kv_chunk_bytes(0), offload_);
  copy(slot.out.data(), out_store_.chunk(0), q_chunk_bytes(0), offload_);
  copy(slot.lse.data(), lse_store_.chunk(0), lse_chunk_bytes(0), offload_);
  slot.chunk = 0;
  slot.ready.record(offload_.get());
  kv.chunk = 0;
  kv.ready.record(offload_.get());
}

void FpdtAttention::forward(FpdtChunkIo& io) {
  const int64_t u = shape_.chunks();
  const bool offload = options_.offload;
  const bool host_syncs = offload && options_.sync == FpdtSync::kHostSyncs;
  for (int64_t i = 0; i < u; ++i) {
    // Chunk i arrives (QKV projection + all-to-alls in training). Its k, v go to the slot that holds
    // neither chunk 0 (prefetched, or kept from row 0, for block (i, 0)) nor anything in use.
    KvSlot* newest = nullptr;
    void* q = q_store_.chunk(i);
    void* k = k_store_.chunk(i);
    void* v = v_store_.chunk(i);
    if (offload) {
      newest = &free_slot(i > 0 ? &slot_holding(0) : nullptr, nullptr);
      compute_.wait(row_offloaded_);  // the previous chunk's q, k, v have left these buffers
      q = fwd_q_.data();
      k = newest->k.data();
      v = newest->v.data();
    }
    io.produce_qkv(i, q, k, v, compute_.get());
    if (offload) {
      if (host_syncs) {
        host_sync();
      }
      produced_.record(compute_.get());
      offload_.wait(produced_);
      copy(q_store_.chunk(i), q, q_chunk_bytes(i), offload_);
      copy(k_store_.chunk(i), k, kv_chunk_bytes(i), offload_);
      copy(v_store_.chunk(i), v, kv_chunk_bytes(i), offload_);
      row_offloaded_.record(offload_.get());
      newest->chunk = i;
      newest->ready.record(compute_.get());
      compute_.wait(output_saved_[i % 2]);  // this row's output buffers were saved two rows ago
    }
    float* lse = offload ? lse_acc_[i % 2].data() : reinterpret_cast<float*>(lse_store_.chunk(i));

    for (int64_t j = 0; j <= i; ++j) {
      KvSlot* slot = nullptr;
      const void* k_j = k_store_.chunk(j);
      const void* v_j = v_store_.chunk(j);
      if (offload) {
        slot = j == i ? newest : &slot_holding(j);
        compute_.wait(slot->ready);
        k_j = slot->k.data();
        v_j = slot->v.data();
      }
      const AttentionShape block = shape_.block(i, j);
      attention_forward(make_forward_params(block, {j == i, options_.softmax_scale}, options_.dtype, q, k_j,
                                            v_j, block_out_.data(), block_lse_.data()),
                        compute_.get(), options_.attention_kernel);
      merge_attention(make_merge_params(rows_of(block), options_.dtype, j == 0, out_acc_.data(), lse,
                                        block_out_.data(), block_lse_.data()),
                      compute_.get());
      if (!offload) {
        continue;
      }
      slot->released.record(compute_.get());
      // DeepSpeed's next chunk: j + 1 in this row, else chunk 0 of the next row; fetched unless it
      // is the current chunk (kept) or this row's newest (already here).
      const int64_t next = j < i ? j + 1 : (i + 1 < u ? 0 : -1);
      if (next >= 0 && next != j && next != i) {
        prefetch_kv(next, free_slot(slot, newest));
      }
      if (next != j) {
        slot->chunk = -1;  // DeepSpeed frees the GPU copy (the host copy stays)
      }
      if (i == u - 1 && j == u - 1 && u > 1) {
        prefetch_for_backward();
      }
      if (host_syncs) {
        host_sync();
      }
    }

    // The output: out.to(dtype), handed on (output all-to-all), and saved with the lse.
    void* out = offload ? out_elem_[i % 2].data() : static_cast<void*>(out_store_.chunk(i));
    convert_float(out_acc_.data(), out, options_.dtype,
                  shape_.batch * shape_.chunk_tokens[i] * shape_.heads * shape_.head_dim, compute_.get());
    io.consume_output(i, out, compute_.get());
    if (offload) {
      row_done_.record(compute_.get());
      general_.wait(row_done_);
      copy(out_store_.chunk(i), out, q_chunk_bytes(i), general_);
      copy(lse_store_.chunk(i), lse, lse_chunk_bytes(i), general_);
      output_saved_[i % 2].record(general_.get());
    }
  }
  if (offload && u == 1) {
    prefetch_for_backward();
  }
  if (offload) {
    join_copy_streams();
  }
  if (host_syncs) {
    general_.synchronize();
    compute_.synchronize();
  }
  forward_done_ = true;
}

// The query-side tensors of chunk `chunk` into `slot` on the offload stream, in DeepSpeed's order
// (A5): the dq partial (a first fetch brings DeepSpeed's pinned zeros), q, out and lse from the
// host, then dout from the host or, on a first fetch, from the chunk I/O (the lazy grad-output
// all-to-all), then saved to the host.
void FpdtAttention::fetch_query_side(int64_t chunk, bool first_fetch, FpdtChunkIo& io, QuerySlot& slot) {
  offload_.wait(slot.released);
  const void* dq_source = first_fetch ? static_cast<const void*>(dq_zeros_.data()) : dq_store_.chunk(chunk);
  copy(slot.dq.data(), dq_source, q_chunk_bytes(chunk) / element_bytes_ * sizeof(float), offload_);
  copy(slot.q.data(), q_store_.chunk(chunk), q_chunk_bytes(chunk), offload_);
  copy(slot.out.data(), out_store_.chunk(chunk), q_chunk_bytes(chunk), offload_);
  copy(slot.lse.data(), lse_store_.chunk(chunk), lse_chunk_bytes(chunk), offload_);
  if (first_fetch) {
    io.produce_grad_output(chunk, slot.dout.data(), offload_.get());
    copy(dout_store_.chunk(chunk), slot.dout.data(), q_chunk_bytes(chunk), offload_);
  } else {
    copy(slot.dout.data(), dout_store_.chunk(chunk), q_chunk_bytes(chunk), offload_);
  }
  slot.chunk = chunk;
  slot.ready.record(offload_.get());
}

void FpdtAttention::backward(FpdtChunkIo& io) {
  if (!forward_done_) {
    throw std::logic_error("FPDT pipeline: backward() needs a forward() first");
  }
  forward_done_ = false;
  const int64_t u = shape_.chunks();
  const bool offload = options_.offload;
  const bool host_syncs = offload && options_.sync == FpdtSync::kHostSyncs;
  const size_t dq_chunk_floats =
      static_cast<size_t>(shape_.batch * max_chunk_ * shape_.heads * shape_.head_dim);

  // Setup: dout of chunk 0 (first grad-output all-to-all), dq[0] zeros on the GPU, dk, dv zeros.
  // Chunk 0's q, out, lse, k, v were prefetched by the forward.
  if (offload) {
    offload_.wait(output_saved_[(u - 1) % 2]);  // every chunk's out and lse are on the host
    QuerySlot& first = query_slots_[0];
    compute_.wait(first.released);
    io.produce_grad_output(0, first.dout.data(), compute_.get());
    if (host_syncs) {
      host_sync();
    }
    produced_.record(compute_.get());
    offload_.wait(produced_);
    copy(dout_store_.chunk(0), first.dout.data(), q_chunk_bytes(0), offload_);
    first.ready.record(offload_.get());
    CUDA_CHECK(cudaMemsetAsync(first.dq.data(), 0, dq_chunk_floats * sizeof(float), compute_.get()));
  } else {
    io.produce_grad_output(0, dout_store_.chunk(0), compute_.get());
    CUDA_CHECK(cudaMemsetAsync(dq_store_.chunk(0), 0, dq_store_.total_bytes(), compute_.get()));
  }
  CUDA_CHECK(cudaMemsetAsync(dk_acc_.data(), 0, dk_acc_.bytes(), compute_.get()));
  CUDA_CHECK(cudaMemsetAsync(dv_acc_.data(), 0, dv_acc_.bytes(), compute_.get()));

  for (int64_t i = 0; i < u; ++i) {
    KvSlot* kv = offload ? &bwd_kv_[i % 2] : nullptr;
    const void* k = offload ? kv->k.data() : static_cast<const void*>(k_store_.chunk(i));
    const void* v = offload ? kv->v.data() : static_cast<const void*>(v_store_.chunk(i));
    if (offload) {
      compute_.wait(kv->ready);
    }
    for (int64_t q = i; q < u; ++q) {
      QuerySlot* slot = nullptr;
      const void* q_ptr = q_store_.chunk(q);
      const void* out = out_store_.chunk(q);
      const void* dout = dout_store_.chunk(q);
      auto* lse = reinterpret_cast<float*>(lse_store_.chunk(q));
      auto* dq = reinterpret_cast<float*>(dq_store_.chunk(q));
      if (offload) {
        slot = query_slots_[0].chunk == q ? &query_slots_[0] : &query_slots_[1];
        if (slot->chunk != q) {
          throw std::logic_error("FPDT pipeline: query chunk " + std::to_string(q) + " was not prefetched");
        }
        compute_.wait(slot->ready);
        q_ptr = slot->q.data();
        out = slot->out.data();
        dout = slot->dout.data();
        lse = slot->lse.data();
        dq = slot->dq.data();
      } else if (i == 0 && q > 0) {
        io.produce_grad_output(q, dout_store_.chunk(q), compute_.get());
      }
      const AttentionFwdParams fwd =
          make_forward_params(shape_.block(q, i), {q == i, options_.softmax_scale}, options_.dtype, q_ptr, k,
                              v, const_cast<void*>(out), lse);
      attention_backward(make_backward_params(fwd, dout, dq, dk_acc_.data(), dv_acc_.data(), delta_.data()),
                         compute_.get(), options_.attention_kernel);
      if (!offload) {
        continue;
      }
      slot->computed.record(compute_.get());
      // Prefetch the next query chunk: q + 1, else the first of the next outer iteration; that is
      // this very chunk when i = u - 2, which then stays where it is.
      const int64_t next = q + 1 < u ? q + 1 : (i + 1 < u ? i + 1 : -1);
      const bool keep = next == q;
      if (next >= 0 && !keep) {
        // Only outer iteration 0 brings a chunk for the first time (zeros for dq, dout from the I/O).
        const bool first_fetch = i == 0 && next == q + 1;
        fetch_query_side(next, first_fetch, io, slot == &query_slots_[0] ? query_slots_[1] : query_slots_[0]);
      }
      if (host_syncs) {
        host_sync();
      }
      // The dq partial goes back to the host; chunk i's, now complete, also stays on the GPU.
      offload_.wait(slot->computed);
      copy(dq_store_.chunk(q), slot->dq.data(), q_chunk_bytes(q) / element_bytes_ * sizeof(float), offload_);
      if (q == i) {
        std::swap(slot->dq, dq_done_);
      }
      if (keep) {
        slot->ready.record(offload_.get());  // the next block accumulates into dq once it is copied
      } else {
        slot->chunk = -1;
        slot->released.record(offload_.get());
      }
    }

    // dq, dk, dv of chunk i are complete: cast and hand on (three all-to-alls in training).
    if (host_syncs) {
      host_sync();
    }
    const int64_t q_elements = shape_.batch * shape_.chunk_tokens[i] * shape_.heads * shape_.head_dim;
    const int64_t kv_elements = shape_.batch * shape_.chunk_tokens[i] * shape_.kv_heads * shape_.head_dim;
    const float* dq_i = offload ? dq_done_.data() : reinterpret_cast<const float*>(dq_store_.chunk(i));
    convert_float(dq_i, dq_elem_.data(), options_.dtype, q_elements, compute_.get());
    convert_float(dk_acc_.data(), dk_elem_.data(), options_.dtype, kv_elements, compute_.get());
    convert_float(dv_acc_.data(), dv_elem_.data(), options_.dtype, kv_elements, compute_.get());
    io.consume_grads(i, dq_elem_.data(), dk_elem_.data(), dv_elem_.data(), compute_.get());
    CUDA_CHECK(cudaMemsetAsync(dk_acc_.data(), 0, dk_acc_.bytes(), compute_.get()));
    CUDA_CHECK(cudaMemsetAsync(dv_acc_.data(), 0, dv_acc_.bytes(), compute_.get()));
    if (offload) {
      kv->released.record(compute_.get());
      if (i + 1 < u) {
        KvSlot& next = bwd_kv_[(i + 1) % 2];
        offload_.wait(next.released);
        copy(next.k.data(), k_store_.chunk(i + 1), kv_chunk_bytes(i + 1), offload_);
        copy(next.v.data(), v_store_.chunk(i + 1), kv_chunk_bytes(i + 1), offload_);
        next.chunk = i + 1;
        next.ready.record(offload_.get());
        if (host_syncs) {
          host_sync();
        }
      }
    }
  }
  if (offload) {
    join_copy_streams();
  }
  if (host_syncs) {
    compute_.synchronize();
  }
}

void FpdtAttention::synchronize() const {
  compute_.synchronize();
  offload_.synchronize();
  general_.synchronize();
}

}  // namespace trainsim::kernels
