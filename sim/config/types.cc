#include "sim/config/types.h"

namespace trainsim::config {

int dtype_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp8:
      return 1;
    case Dtype::kBf16:
    case Dtype::kFp16:
      return 2;
    case Dtype::kFp32:
    case Dtype::kTf32:
      return 4;
    case Dtype::kFp64:
      return 8;
  }
  return 0;
}

}  // namespace trainsim::config
