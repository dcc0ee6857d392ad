// DeviceSequenceIo: FPDT chunk I/O over whole-sequence tensors in device memory. Producing chunk i
// copies its token range out of q, k, v (dout); consuming copies out (dq, dk, dv) back in. It stands
// in for the QKV projection and the all-to-alls when one GPU verifies or times the pipeline; the
// copies are device-to-device, so the offload traffic measured is the pipeline's own.
#ifndef TRAINSIM_KERNELS_FPDT_SEQUENCE_IO_H_
#define TRAINSIM_KERNELS_FPDT_SEQUENCE_IO_H_

#include <cstddef>

#include "kernels/cuda/device_buffer.h"
#include "kernels/data_type.h"
#include "kernels/fpdt/fpdt_shape.h"
#include "kernels/fpdt/pipeline.h"

namespace trainsim::kernels {

class DeviceSequenceIo : public FpdtChunkIo {
 public:
  // Allocates the eight whole-sequence tensors of `shape` (FpdtShape's layout) in `dtype`, contents
  // undefined. Throws GpuError.
  DeviceSequenceIo(const FpdtShape& shape, DataType dtype);

  // Inputs, to fill before forward() / backward().
  DeviceBuffer<std::byte>& q() { return q_; }
  DeviceBuffer<std::byte>& k() { return k_; }
  DeviceBuffer<std::byte>& v() { return v_; }
  DeviceBuffer<std::byte>& dout() { return dout_; }
  // Outputs, whole after forward() / backward() and a synchronize().
  DeviceBuffer<std::byte>& out() { return out_; }
  DeviceBuffer<std::byte>& dq() { return dq_; }
  DeviceBuffer<std::byte>& dk() { return dk_; }
  DeviceBuffer<std::byte>& dv() { return dv_; }

  void produce_qkv(int64_t chunk, void* q, void* k, void* v, cudaStream_t stream) override;
  void consume_output(int64_t chunk, const void* out, cudaStream_t stream) override;
  void produce_grad_output(int64_t chunk, void* dout, cudaStream_t stream) override;
  void consume_grads(int64_t chunk, const void* dq, const void* dk, const void* dv,
                     cudaStream_t stream) override;

 private:
  // Copies chunk `chunk` of a whole tensor of `width` elements per token to a dense chunk, or back.
  void gather(const DeviceBuffer<std::byte>& whole, int64_t chunk, int64_t width, void* dst,
              cudaStream_t stream) const;
  void scatter(const void* src, int64_t chunk, int64_t width, DeviceBuffer<std::byte>& whole,
               cudaStream_t stream) const;

  FpdtShape shape_;
  size_t element_bytes_;
  DeviceBuffer<std::byte> q_, k_, v_, dout_, out_, dq_, dk_, dv_;
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_FPDT_SEQUENCE_IO_H_
