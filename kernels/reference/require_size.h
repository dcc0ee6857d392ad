// Argument check shared by the CPU references: a tensor's span must hold exactly the elements its
// shape needs.
#ifndef TRAINSIM_KERNELS_REFERENCE_REQUIRE_SIZE_H_
#define TRAINSIM_KERNELS_REFERENCE_REQUIRE_SIZE_H_

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace trainsim::kernels::reference {

// Throws std::invalid_argument naming `reference` and `tensor` when `span` does not hold
// `expected_elements`.
template <typename T>
void require_size(std::span<T> span, int64_t expected_elements, const char* reference, const char* tensor) {
  if (static_cast<int64_t>(span.size()) != expected_elements) {
    throw std::invalid_argument(std::string(reference) + " reference: " + tensor + " has " +
                                std::to_string(span.size()) + " elements, the shape needs " +
                                std::to_string(expected_elements));
  }
}

}  // namespace trainsim::kernels::reference

#endif  // TRAINSIM_KERNELS_REFERENCE_REQUIRE_SIZE_H_
