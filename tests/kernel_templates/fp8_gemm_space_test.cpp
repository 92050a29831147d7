// unit: fp8_gemm's default config space (configs/spaces/fp8_gemm.toml) over the shipped shape set
// (configs/shapes/fp8_llama3-8b.toml): every kept config is accepted by its spec (whose rules filter
// the points), names are the spec's, each shape keeps configs, the spec's default is accepted
// everywhere, a K that is not a multiple of 16 keeps nothing (counted under the specs' rules).

#include <gtest/gtest.h>

#include "core/dtype.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "shipped_configs.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/space/config_space.hpp"

namespace ktune::kernel_templates {
namespace {

using test::shipped_configs;

TEST(Fp8Space, SpaceAgreesWithSpecOverLlamaShapes) {
  const auto space = tuner::ConfigSpace::load(shipped_configs() / "spaces" / "fp8_gemm.toml");
  const auto shapes = tuner::load_shape_set(shipped_configs() / "shapes" / "fp8_llama3-8b.toml");
  ASSERT_EQ(space.kernel(), "fp8_gemm");
  ASSERT_EQ(shapes.kernel, "fp8_gemm");
  EXPECT_EQ(shapes.shapes.size(), 20u);  // 4 layers x 5 token counts
  const KernelSpec& spec = find_spec("fp8_gemm", "mma");
  ASSERT_EQ(space.dims(), spec.dims());
  std::size_t checked = 0;
  for (const auto& shape : shapes.shapes) {
    for (const char* mode : {"nt", "nt+rowcol"}) {
      tuner::ProblemContext ctx;
      ctx.dims = shape.dims;
      ctx.elem_bytes = static_cast<int64_t>(size_of(DType::kFP8E4M3));
      ctx.dtype = DType::kFP8E4M3;
      ctx.layout = mode;
      const Problem problem{shape.dims, DType::kFP8E4M3, mode};
      const auto e = space.enumerate(ctx);
      EXPECT_FALSE(e.configs.empty()) << shape.label;
      for (const auto& c : e.configs) {
        const KernelSpec& variant = find_spec("fp8_gemm", c.variant);
        const auto why = variant.rejection(problem, c);
        EXPECT_FALSE(why.has_value()) << space.canonical_name(c, DType::kFP8E4M3, mode) << " " << shape.label
                                      << ": " << why.value_or("");
        EXPECT_EQ(variant.canonical_name(problem, c), space.canonical_name(c, DType::kFP8E4M3, mode));
        ++checked;
      }
      EXPECT_EQ(spec.rejection(problem, spec.default_config(problem)), std::nullopt) << shape.label;
    }
  }
  EXPECT_GT(checked, 1000u);
  tuner::ProblemContext odd;
  odd.dims = {{"m", 16}, {"n", 4096}, {"k", 4100}};
  odd.elem_bytes = 1;
  odd.dtype = DType::kFP8E4M3;
  odd.layout = "nt";
  try {
    space.enumerate(odd);
    ADD_FAILURE() << "K=4100 kept configs";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(" mma.spec "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
