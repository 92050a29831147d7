// The template source hash of every kernel, pinned. The hash is part of every tuned key (a changed
// template makes old results stale), so a change that moves, renames or reformats a device source
// without meaning to change the kernel must leave these values alone; a change that does change a
// kernel updates its value here, on purpose. A kernel's hash covers its sources and the headers
// they include (SourceLibrary::included_files): a header only other kernels include leaves it alone.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kernel_templates/kernel_catalog.hpp"

namespace ktune::kernel_templates {
namespace {

TEST(TemplateHashes, ArePinned) {
  const std::map<std::string, std::string> pinned = {
      {"decode_attention", "64be4c3ae49ed04b"},
      {"fp8_gemm", "32518e6a5c520e09"},
      {"gemm", "1a1e1e700b361f0e"},
      {"rmsnorm", "9097e7cbbf778691"},
      {"rmsnorm_rope", "f5fe3b901475e4d2"},
      {"rope_append", "c2d0698378b6dfaa"},
      {"softmax", "7c31760d5d795b91"},
      {"swiglu", "246484f740671a38"},
  };
  EXPECT_EQ(current_template_hashes(), pinned);
}

}  // namespace
}  // namespace ktune::kernel_templates
