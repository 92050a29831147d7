// The kernel catalog is derived from the registered templates: every family's dimensions are those of
// each of its specs, its dtypes and layouts the union of theirs; and each spec's declared dtypes and
// layouts are exactly those its rejection() accepts (so the catalog, the spaces and the runtime,
// which read the declarations, agree with what the templates run).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "core/dtype.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"

namespace ktune::kernel_templates {
namespace {

bool mentions(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(KernelCatalog, EveryFamilyIsDescribedByItsTemplates) {
  size_t families = 0;
  for (const FamilyInfo& family : template_families()) {
    SCOPED_TRACE(std::string(family.name));
    const KernelDescriptor* d = find_kernel(family.name);
    const auto specs = specs_of(family.name);
    ASSERT_FALSE(specs.empty());
    std::set<DType> dtypes;
    std::set<std::string> layouts;
    for (const KernelSpec* s : specs) {
      EXPECT_EQ(s->dims(), d->dims) << s->variant();
      for (DType t : s->dtypes()) dtypes.insert(t);
      for (const auto& l : s->layouts()) layouts.insert(l);
    }
    EXPECT_EQ(std::set<DType>(d->dtypes.begin(), d->dtypes.end()), dtypes);
    EXPECT_EQ(std::set<std::string>(d->layouts.begin(), d->layouts.end()), layouts);
    EXPECT_EQ(d->layouts.size(), layouts.size()) << "a layout listed twice";
    ASSERT_FALSE(d->layouts.empty());
    EXPECT_EQ(d->layouts.front(), family.default_layout);
    EXPECT_EQ(d->summary, family.summary);
    ++families;
  }
  EXPECT_EQ(families, 8u);
  // The one entry that is not a template family: the bandwidth ceiling.
  EXPECT_TRUE(specs_of("copy").empty());
  EXPECT_EQ(find_kernel("copy")->dims, (std::vector<std::string>{"n"}));
  EXPECT_EQ(kernel_catalog().size(), families + 1);
}

/// A problem of `spec`'s kernel in `dtype` and `layout`, dims from the default shape of the catalog.
Problem problem_of(const KernelSpec& spec, DType dtype, const std::string& layout) {
  Problem p{{}, dtype, layout};
  for (const auto& name : spec.dims()) p.dims.emplace_back(name, 64);
  if (spec.dims() == std::vector<std::string>{"m", "n", "k"}) p.dims = {{"m", 16}, {"n", 128}, {"k", 256}};
  if (spec.kernel() == "decode_attention")
    p.dims = {{"batch", 2}, {"heads_q", 8}, {"heads_kv", 2}, {"seq", 256}, {"head_dim", 128}};
  if (spec.kernel() == "rmsnorm_rope")
    p.dims = {{"tokens", 4}, {"heads_q", 8}, {"heads_kv", 2}, {"head_dim", 128}};
  return p;
}

TEST(KernelCatalog, DeclaredDtypesAndLayoutsAreWhatRejectionAccepts) {
  const DType all_dtypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kFP8E4M3};
  size_t checked = 0;
  for (const FamilyInfo& family : template_families()) {
    const KernelDescriptor* d = find_kernel(family.name);
    for (const KernelSpec* s : specs_of(family.name)) {
      SCOPED_TRACE(std::string(family.name) + "/" + std::string(s->variant()));
      const auto served = s->dtypes();
      const auto layouts = s->layouts();
      for (DType t : all_dtypes) {
        for (const auto& l : d->layouts) {
          const Problem p = problem_of(*s, t, l);
          const bool declared =
              std::find(served.begin(), served.end(), t) != served.end() && mentions(layouts, l);
          // The spec's default config for a served (dtype, layout) runs; for any other the spec
          // refuses every config, the default included.
          const auto why = s->rejection(p, s->default_config(p));
          if (declared) {
            EXPECT_EQ(why, std::nullopt) << to_string(t) << " '" << l << "'";
          } else {
            EXPECT_TRUE(why.has_value()) << to_string(t) << " '" << l << "' is accepted but not declared";
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100u);
}

}  // namespace
}  // namespace ktune::kernel_templates
