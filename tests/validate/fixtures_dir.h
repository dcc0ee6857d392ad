// Where the validate tests' case and stack-profile fixtures live.
#ifndef TRAINSIM_TESTS_VALIDATE_FIXTURES_DIR_H_
#define TRAINSIM_TESTS_VALIDATE_FIXTURES_DIR_H_

#include <filesystem>

namespace trainsim::validate::testing {

inline const std::filesystem::path kFixtures =
    std::filesystem::path(TRAINSIM_SOURCE_DIR) / "tests/validate/fixtures";

}  // namespace trainsim::validate::testing

#endif  // TRAINSIM_TESTS_VALIDATE_FIXTURES_DIR_H_
