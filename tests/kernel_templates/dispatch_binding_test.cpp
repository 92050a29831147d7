// Each family's dispatch binding (dispatch_binding.hpp) agrees with the family's templates: its
// default templates exist, every scalar found by name is one parameter of its signature, the
// signature is the parameter list of every template's kernel as its .cu source declares it, and
// every plan the templates build passes its tensors and the spec's constants where the signature
// names them. A kernel whose parameters move without its spec's signature fails here, not in a
// launch with the wrong scalar.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_templates/dispatch_binding.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "kernel_templates/user_kernel/kernel_source_scan.hpp"

namespace ktune::kernel_templates {
namespace {

/// A problem each template of the family that has a signature serves (in its default config).
Problem signature_problem(const KernelSpec& spec, const std::string& layout) {
  Problem p{{}, spec.dtypes().front(), layout};
  if (spec.kernel() == "rmsnorm_rope")
    p.dims = {{"tokens", 5}, {"heads_q", 8}, {"heads_kv", 2}, {"head_dim", 128}};
  if (spec.kernel() == "rope_append")
    p.dims = {{"tokens", 5}, {"heads_q", 14}, {"heads_kv", 2}, {"head_dim", 128}, {"rot_dim", 64}};
  if (spec.kernel() == "decode_attention")
    p.dims = {{"batch", 3}, {"heads_q", 28}, {"heads_kv", 4}, {"seq", 1000}, {"head_dim", 128}};
  return p;
}

/// The function a name expression instantiates: "ktune_rope_append<64,...>" -> "ktune_rope_append".
std::string function_of(const std::string& name_expression) {
  return name_expression.substr(0, name_expression.find('<'));
}

TEST(DispatchBinding, EveryFamilyDeclaresABindingItsTemplatesCanServe) {
  for (const FamilyInfo& family : template_families()) {
    SCOPED_TRACE(std::string(family.name));
    const DispatchBinding& d = family.dispatch;
    EXPECT_FALSE(d.slots.empty());
    EXPECT_NO_THROW(find_spec(family.name, d.default_variant));
    for (std::string_view v : d.preferred_defaults) EXPECT_NO_THROW(find_spec(family.name, v));
    for (const CallScalar& s : d.scalars) {
      if (!s.by_value) {
        EXPECT_TRUE(signature_index(d.signature, s.name).has_value()) << s.name;
      }
    }
    for (std::string_view t : d.row_strides) EXPECT_TRUE(signature_index(d.slots, t).has_value()) << t;
  }
}

TEST(DispatchBinding, TheSignatureIsEveryTemplatesKernelAsItsSourceDeclaresIt) {
  const SourceLibrary sources = SourceLibrary::builtin();
  int checked = 0;
  for (const FamilyInfo& family : template_families()) {
    const std::span<const std::string_view> signature = family.dispatch.signature;
    if (signature.empty()) continue;
    for (const KernelSpec* spec : specs_of(family.name)) {
      SCOPED_TRACE(std::string(family.name) + "/" + std::string(spec->variant()));
      const Problem p = signature_problem(*spec, spec->layouts().front());
      const Config config = spec->default_config(p);
      ASSERT_EQ(spec->rejection(p, config), std::nullopt);
      const std::string function = function_of(spec->launch_plan(p, config).launches.at(0).name_expression);
      const auto decl = find_kernel_template(sources.text(spec->source_name()), function);
      ASSERT_TRUE(decl.has_value()) << function << " in " << spec->source_name();
      ASSERT_EQ(decl->params.size(), signature.size()) << function;
      for (std::size_t i = 0; i < signature.size(); ++i) {
        // An unnamed parameter (one the template does not read) matches any name.
        if (!decl->params[i].empty()) {
          EXPECT_EQ(decl->params[i], signature[i]) << function << " parameter " << i;
        }
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6);  // rmsnorm_rope 2, rope_append 1, decode_attention 3
}

TEST(DispatchBinding, EveryPlanPassesItsTensorsAndTheSpecsConstantsWhereTheSignatureNamesThem) {
  int plans = 0;
  for (const FamilyInfo& family : template_families()) {
    const DispatchBinding& d = family.dispatch;
    if (d.signature.empty()) continue;
    for (const KernelSpec* spec : specs_of(family.name)) {
      for (const std::string& layout : spec->layouts()) {
        SCOPED_TRACE(std::string(family.name) + "/" + std::string(spec->variant()) + " '" + layout + "'");
        const Problem p = signature_problem(*spec, layout);
        const Config config = spec->default_config(p);
        ASSERT_EQ(spec->rejection(p, config), std::nullopt);
        const std::vector<ArgSpec> args = spec->launch_plan(p, config).launches.at(0).args;
        ASSERT_EQ(args.size(), d.signature.size());
        for (std::size_t i = 0; i < args.size(); ++i) {
          if (args[i].kind == ArgSpec::Kind::kTensor) {
            EXPECT_EQ(args[i].tensor, d.signature[i]) << i;
          }
        }
        for (const CallScalar& s : d.scalars) {
          if (s.by_value) continue;
          const ArgSpec& a = args.at(*signature_index(d.signature, s.name));
          const bool f32 = s.kind == CallScalar::Kind::kF32;
          EXPECT_EQ(a.kind, f32 ? ArgSpec::Kind::kF32 : ArgSpec::Kind::kI32) << s.name;
          if (std::isnan(s.spec_value)) continue;
          EXPECT_EQ(f32 ? static_cast<double>(a.real) : static_cast<double>(a.integer), s.spec_value)
              << s.name;
        }
        ++plans;
      }
    }
  }
  EXPECT_EQ(plans, 2 * 2 + 8 + 1 + 2 + 2);  // rmsnorm_rope, rope_append, decode_attention's 3 templates
}

}  // namespace
}  // namespace ktune::kernel_templates
