// The template source hash of every kernel, pinned. The hash is part of every tuned key (a changed
// template makes old results stale), so a change that moves, renames or reformats a device source
// without meaning to change the kernel must leave these values alone; a change that does change a
// kernel updates its value here, on purpose.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kernel_templates/kernel_catalog.hpp"

namespace ktune::kernel_templates {
namespace {

TEST(TemplateHashes, ArePinned) {
  const std::map<std::string, std::string> pinned = {
      {"decode_attention", "bc97b26a56b8a974"},
      {"fp8_gemm", "1baa62e1b4c17d71"},
      {"gemm", "aba03bd40baff218"},
      {"rmsnorm", "4b3e9c69f95c9a53"},
      {"rmsnorm_rope", "4948835853fa3c71"},
      {"softmax", "9b16dd0ed1a58780"},
      {"swiglu", "f55cc6bf29b8437c"},
  };
  EXPECT_EQ(current_template_hashes(), pinned);
}

}  // namespace
}  // namespace ktune::kernel_templates
