#pragma once
// The source tree's configs/ for the tests of the shipped spaces and shape sets.

#include <cstdlib>
#include <filesystem>

namespace ktune::kernel_templates::test {

/// $KTUNE_SOURCE_DIR/configs (ctest sets it), else the configured source tree's.
inline std::filesystem::path shipped_configs() {
  const char* dir = std::getenv("KTUNE_SOURCE_DIR");
  return std::filesystem::path(dir != nullptr ? dir : KTUNE_TEST_SOURCE_DIR) / "configs";
}

}  // namespace ktune::kernel_templates::test
