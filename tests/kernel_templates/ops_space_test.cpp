// The operators' default config spaces (configs/spaces/{rmsnorm,rmsnorm_rope,softmax,swiglu}.toml)
// over the shipped shape sets (configs/shapes/ops_*.toml): the space takes its dimensions from the
// specs, every config it keeps is accepted by its spec (the spec's rules filter the points; nothing it
// refuses is compiled), names are the spec's, each shape keeps at least one config, and the spec's
// default config is accepted everywhere.

#include <gtest/gtest.h>

#include "core/dtype.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "shipped_configs.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/space/config_space.hpp"

namespace ktune::kernel_templates {
namespace {

using test::shipped_configs;

void check_space(const std::string& kernel, const std::vector<std::string>& modes, std::size_t every_nth) {
  const auto space = tuner::ConfigSpace::load(shipped_configs() / "spaces" / (kernel + ".toml"));
  const auto shapes = tuner::load_shape_set(shipped_configs() / "shapes" / ("ops_" + kernel + ".toml"));
  ASSERT_EQ(space.kernel(), kernel);
  ASSERT_EQ(shapes.kernel, kernel);
  ASSERT_EQ(space.dims(), specs_of(kernel).front()->dims());
  std::size_t checked = 0;
  for (std::size_t s = 0; s < shapes.shapes.size(); s += every_nth) {
    const auto& shape = shapes.shapes[s];
    for (const DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (const auto& mode : modes) {
        tuner::ProblemContext ctx;
        ctx.dims = shape.dims;
        ctx.elem_bytes = static_cast<int64_t>(size_of(dtype));
        ctx.dtype = dtype;
        ctx.layout = mode;
        const Problem problem{shape.dims, dtype, mode};
        const auto e = space.enumerate(ctx);
        EXPECT_FALSE(e.configs.empty()) << shape.label;
        for (const auto& c : e.configs) {
          const KernelSpec& spec = find_spec(kernel, c.variant);
          const auto why = spec.rejection(problem, c);
          EXPECT_FALSE(why.has_value())
              << space.canonical_name(c, dtype, mode) << " " << shape.label << ": " << why.value_or("");
          EXPECT_EQ(spec.canonical_name(problem, c), space.canonical_name(c, dtype, mode));
          ++checked;
        }
        for (const KernelSpec* spec : specs_of(kernel)) {
          if (spec->variant() != space.templates().front().name) continue;  // the family's first serves all
          EXPECT_EQ(spec->rejection(problem, spec->default_config(problem)), std::nullopt)
              << kernel << " default @ " << shape.label << " " << to_string(dtype);
        }
      }
    }
  }
  EXPECT_GT(checked, 100u) << kernel;
}

TEST(OpsSpace, RmsNormSpaceAgreesWithSpec) { check_space("rmsnorm", {"", "residual"}, 3); }
TEST(OpsSpace, RmsNormRopeSpaceAgreesWithSpec) { check_space("rmsnorm_rope", {"neox", "gptj"}, 3); }
TEST(OpsSpace, SoftmaxSpaceAgreesWithSpec) { check_space("softmax", {"", "causal", "padding"}, 3); }
TEST(OpsSpace, SwigluSpaceAgreesWithSpec) { check_space("swiglu", {"fused", "split"}, 3); }

}  // namespace
}  // namespace ktune::kernel_templates
