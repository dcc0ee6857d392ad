#include "sim/measured/kernel_names.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>

namespace trainsim::measured {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool has_any(const std::string& s, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(),
                     [&](std::string_view p) { return s.find(p) != std::string::npos; });
}

}  // namespace

ActivityClass classify_kernel(std::string_view name) {
  const std::string n = lower(name);
  if (n.find("nccl") != std::string::npos) {
    if (has_any(n, {"allreduce"})) return ActivityClass::kAllReduce;
    if (has_any(n, {"allgather"})) return ActivityClass::kAllGather;
    if (has_any(n, {"reducescatter"})) return ActivityClass::kReduceScatter;
    if (has_any(n, {"sendrecv", "send", "recv", "alltoall"})) return ActivityClass::kSendRecv;
    return ActivityClass::kOtherCollective;
  }
  if (has_any(n, {"deep_ep", "deepep"})) return ActivityClass::kSendRecv;
  if (has_any(n, {"flash", "fmha", "attn", "attention", "sdpa"})) return ActivityClass::kAttention;
  if (has_any(n, {"gemm", "gemv", "nvjet", "xmma", "cutlass", "matmul"})) return ActivityClass::kGemm;
  if (has_any(n, {"multi_tensor_apply", "adam", "lamb", "optimizer"})) return ActivityClass::kOptimizer;
  return ActivityClass::kMemory;
}

ActivityClass classify_copy(std::string_view name) {
  const std::string n = lower(name);
  return has_any(n, {"htod", "dtoh", "host", "pinned", "pageable"}) ? ActivityClass::kHostCopy
                                                                    : ActivityClass::kMemory;
}

std::string_view collective_kind(std::string_view name) {
  const std::string n = lower(name);
  if (has_any(n, {"all_to_all", "alltoall"})) return "all_to_all";
  if (has_any(n, {"allgather", "all_gather"})) return "all_gather";
  if (has_any(n, {"reduce_scatter", "reducescatter"})) return "reduce_scatter";
  if (has_any(n, {"allreduce", "all_reduce"})) return "all_reduce";
  if (has_any(n, {"broadcast"})) return "broadcast";
  if (has_any(n, {"barrier"})) return "barrier";
  if (has_any(n, {"send"})) return "send";
  if (has_any(n, {"recv"})) return "recv";
  return "";
}

}  // namespace trainsim::measured
