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
      {"decode_attention", "912f0be436dda69e"}, {"fp8_gemm", "5bcc1ee149ddc3c2"},
      {"gemm", "66a94c80a04b3538"},             {"rmsnorm", "8ec26f14f30d8df2"},
      {"rmsnorm_rope", "d09029c2aab01632"},     {"softmax", "f778c861f4974724"},
      {"swiglu", "a4ac8f7e64d3f968"},
  };
  EXPECT_EQ(current_template_hashes(), pinned);
}

}  // namespace
}  // namespace ktune::kernel_templates
