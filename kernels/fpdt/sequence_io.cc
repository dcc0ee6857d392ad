#include "kernels/fpdt/sequence_io.h"

#include <cuda_runtime_api.h>

#include "kernels/cuda/check.h"

namespace trainsim::kernels {

DeviceSequenceIo::DeviceSequenceIo(const FpdtShape& shape, DataType dtype)
    : shape_(shape), element_bytes_(bytes_of(dtype)) {
  validate(shape);
  const AttentionShape whole = shape.whole();
  const auto q_bytes = static_cast<size_t>(whole.q_elements()) * element_bytes_;
  const auto kv_bytes = static_cast<size_t>(whole.kv_elements()) * element_bytes_;
  q_ = DeviceBuffer<std::byte>(q_bytes);
  k_ = DeviceBuffer<std::byte>(kv_bytes);
  v_ = DeviceBuffer<std::byte>(kv_bytes);
  dout_ = DeviceBuffer<std::byte>(q_bytes);
  out_ = DeviceBuffer<std::byte>(q_bytes);
  dq_ = DeviceBuffer<std::byte>(q_bytes);
  dk_ = DeviceBuffer<std::byte>(kv_bytes);
  dv_ = DeviceBuffer<std::byte>(kv_bytes);
}

void DeviceSequenceIo::gather(const DeviceBuffer<std::byte>& whole, int64_t chunk, int64_t width, void* dst,
                              cudaStream_t stream) const {
  const StridedRegion r = token_chunk_region(shape_, chunk, width);
  const size_t e = element_bytes_;
  CUDA_CHECK(cudaMemcpy2DAsync(dst, r.run_elements * e, whole.data() + r.offset_elements * e,
                               r.pitch_elements * e, r.run_elements * e, r.rows, cudaMemcpyDeviceToDevice,
                               stream));
}

void DeviceSequenceIo::scatter(const void* src, int64_t chunk, int64_t width, DeviceBuffer<std::byte>& whole,
                               cudaStream_t stream) const {
  const StridedRegion r = token_chunk_region(shape_, chunk, width);
  const size_t e = element_bytes_;
  CUDA_CHECK(cudaMemcpy2DAsync(whole.data() + r.offset_elements * e, r.pitch_elements * e, src,
                               r.run_elements * e, r.run_elements * e, r.rows, cudaMemcpyDeviceToDevice,
                               stream));
}

void DeviceSequenceIo::produce_qkv(int64_t chunk, void* q, void* k, void* v, cudaStream_t stream) {
  gather(q_, chunk, shape_.heads * shape_.head_dim, q, stream);
  gather(k_, chunk, shape_.kv_heads * shape_.head_dim, k, stream);
  gather(v_, chunk, shape_.kv_heads * shape_.head_dim, v, stream);
}

void DeviceSequenceIo::consume_output(int64_t chunk, const void* out, cudaStream_t stream) {
  scatter(out, chunk, shape_.heads * shape_.head_dim, out_, stream);
}

void DeviceSequenceIo::produce_grad_output(int64_t chunk, void* dout, cudaStream_t stream) {
  gather(dout_, chunk, shape_.heads * shape_.head_dim, dout, stream);
}

void DeviceSequenceIo::consume_grads(int64_t chunk, const void* dq, const void* dk, const void* dv,
                                     cudaStream_t stream) {
  scatter(dq, chunk, shape_.heads * shape_.head_dim, dq_, stream);
  scatter(dk, chunk, shape_.kv_heads * shape_.head_dim, dk_, stream);
  scatter(dv, chunk, shape_.kv_heads * shape_.head_dim, dv_, stream);
}

}  // namespace trainsim::kernels
