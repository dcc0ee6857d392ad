// Field-by-field comparison of two hardware profiles (every value the schema has), for round-trip
// tests: write -> load_hardware -> the same values.
#ifndef TRAINSIM_TESTS_CALIBRATE_PROFILE_COMPARE_H_
#define TRAINSIM_TESTS_CALIBRATE_PROFILE_COMPARE_H_

#include "sim/config/hardware.h"

namespace trainsim::calibrate::testing {

// Adds a gtest failure for every field of `actual` that differs from `expected` (numbers to 1e-12
// relative: the text of a quantity is exact, its parse may be off by an ulp). Path and content
// hash are not compared.
void expect_same_profile(const config::HardwareProfile& actual, const config::HardwareProfile& expected);

}  // namespace trainsim::calibrate::testing

#endif  // TRAINSIM_TESTS_CALIBRATE_PROFILE_COMPARE_H_
