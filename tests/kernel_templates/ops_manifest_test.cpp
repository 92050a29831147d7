// The operators' manifests (kernel_templates/<kernel>.toml, embedded) agree with their specs:
// dims, every variant's parameters, name and source (in the registry's order), the reference file,
// and the embedded sources exist.

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
    const std::vector<const KernelSpec*> specs = specs_of(kernel);
    ASSERT_EQ(variants->size(), specs.size()) << kernel;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const toml::table& v = *variants->at(i).as_table();
      EXPECT_EQ(v["name"].value_or(std::string()), specs[i]->variant());
      EXPECT_EQ(v["source"].value_or(std::string()), specs[i]->source_name());
      EXPECT_TRUE(lib.contains(specs[i]->source_name()));
      EXPECT_EQ(strings(v["params"]), specs[i]->param_names()) << kernel;
    }
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
