// The operators' manifests (kernel_templates/<kernel>.toml, embedded) agree with their specs:
// dims, parameters, variant, source and reference files, and the embedded sources exist.

#include <gtest/gtest.h>

#include <toml++/toml.h>

#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/spec_registry.hpp"

namespace ktune::kernel_templates {
namespace {

std::vector<std::string> strings(const toml::node_view<const toml::node>& node) {
  std::vector<std::string> out;
  if (const auto* a = node.as_array()) {
    for (const auto& e : *a) out.push_back(e.value_or(std::string()));
  }
  return out;
}

TEST(OpsManifest, EveryManifestAgreesWithItsSpec) {
  const SourceLibrary lib = SourceLibrary::builtin();
  for (const char* kernel : {"rmsnorm", "rmsnorm_rope", "softmax", "swiglu"}) {
    const toml::table t = toml::parse(lib.text(std::string(kernel) + ".toml"));
    const KernelSpec& spec = *specs_of(kernel).front();
    EXPECT_EQ(t["name"].value_or(std::string()), kernel);
    EXPECT_EQ(strings(t["dims"]), spec.dims()) << kernel;
    EXPECT_EQ(strings(t["dtypes"]), (std::vector<std::string>{"f32", "f16", "bf16"})) << kernel;
    const std::string reference = t["reference"].value_or(std::string());
    EXPECT_TRUE(lib.contains(reference)) << reference;
    const auto* variants = t["variants"].as_array();
    ASSERT_NE(variants, nullptr) << kernel;
    ASSERT_EQ(variants->size(), 1u);
    const toml::table& v = *variants->at(0).as_table();
    EXPECT_EQ(v["name"].value_or(std::string()), spec.variant());
    EXPECT_EQ(v["source"].value_or(std::string()), spec.source_name());
    EXPECT_TRUE(lib.contains(spec.source_name()));
    EXPECT_EQ(strings(v["params"]), spec.param_names()) << kernel;
    EXPECT_EQ(spec.reference(Problem{[&] {
                                       std::vector<std::pair<std::string, int64_t>> d;
                                       for (const auto& n : spec.dims())
                                         d.emplace_back(n, n == "head_dim" ? 128 : 8);
                                       return d;
                                     }(),
                                     DType::kBF16, std::string(kernel) == "rmsnorm_rope" ? "neox" : ""})
                  .compile.source_name,
              reference);
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
