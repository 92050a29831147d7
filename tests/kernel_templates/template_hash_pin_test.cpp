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
      {"decode_attention", "d63dd2c7fc903af1"},
      {"fp8_gemm", "210132ba226aebc4"},
      {"gemm", "44aeab1ad21447cb"},
      {"rmsnorm", "6caaaaad369c9a7d"},
      {"rmsnorm_rope", "fff8013b518b2c68"},
      {"softmax", "ac5897db1ace9632"},
      {"swiglu", "9c25ed2cc58f811e"},
  };
  EXPECT_EQ(current_template_hashes(), pinned);
}

}  // namespace
}  // namespace ktune::kernel_templates
