// decode_attention's default config space (configs/spaces/decode_attention.toml) over the shipped
// shape sets (configs/shapes/ops_decode_attention.toml, decode_attention_llm.toml): every kept config is
// accepted by the spec (whose rules filter the points), names are the spec's, each shape keeps several
// configs including SPLIT_K 1 and a split, the spec's default is accepted everywhere, and a head_dim the
// template lacks keeps nothing, counted under the spec.

#include <gtest/gtest.h>

#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "shipped_configs.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/space/config_space.hpp"

namespace ktune::kernel_templates {
namespace {

using test::shipped_configs;

TEST(AttnSpace, SpaceAgreesWithSpecOverTheShapeSet) {
  const auto space = tuner::ConfigSpace::load(shipped_configs() / "spaces" / "decode_attention.toml");
  auto shapes = tuner::load_shape_set(shipped_configs() / "shapes" / "ops_decode_attention.toml");
  const auto targets = tuner::load_shape_set(shipped_configs() / "shapes" / "decode_attention_llm.toml");
  ASSERT_EQ(space.kernel(), "decode_attention");
  ASSERT_EQ(shapes.kernel, "decode_attention");
  ASSERT_EQ(targets.kernel, "decode_attention");
  ASSERT_EQ(space.dims(), find_spec("decode_attention", "splitkv").dims());
  ASSERT_EQ(shapes.shapes.size(), 36u);   // 4 models x 3 batches x 3 contexts
  ASSERT_EQ(targets.shapes.size(), 32u);  // 2 models x 4 batches x 4 contexts
  shapes.shapes.insert(shapes.shapes.end(), targets.shapes.begin(), targets.shapes.end());
  std::size_t checked = 0;
  for (const auto& shape : shapes.shapes) {
    tuner::ProblemContext ctx;
    ctx.dims = shape.dims;
    ctx.elem_bytes = 2;
    ctx.dtype = DType::kBF16;
    ctx.layout = "";
    const Problem problem{shape.dims, DType::kBF16, ""};
    const auto e = space.enumerate(ctx);
    EXPECT_GE(e.configs.size(), 10u) << shape.label << ": " << e.summary();
    bool unsplit = false;
    bool split = false;
    std::size_t mma = 0;
    for (const auto& c : e.configs) {
      const KernelSpec& spec = find_spec("decode_attention", c.variant);
      mma += c.variant == "mma" ? 1 : 0;
      const auto why = spec.rejection(problem, c);
      EXPECT_FALSE(why.has_value()) << space.canonical_name(c, DType::kBF16, "") << " " << shape.label << ": "
                                    << why.value_or("");
      EXPECT_EQ(spec.canonical_name(problem, c), space.canonical_name(c, DType::kBF16, ""));
      (c.at("SPLIT_K") == 1 ? unsplit : split) = true;
      ++checked;
    }
    EXPECT_TRUE(unsplit && split) << shape.label;
    EXPECT_GE(mma, 5u) << shape.label << ": the tensor-core template keeps configs";
    for (const char* variant : {"splitkv", "mma"}) {
      const KernelSpec& spec = find_spec("decode_attention", variant);
      EXPECT_EQ(spec.rejection(problem, spec.default_config(problem)), std::nullopt) << shape.label;
    }
  }
  EXPECT_GT(checked, 500u);
  tuner::ProblemContext odd;
  odd.dims = {{"batch", 1}, {"heads_q", 32}, {"heads_kv", 8}, {"seq", 4096}, {"head_dim", 96}};
  odd.elem_bytes = 2;
  odd.dtype = DType::kBF16;
  try {
    space.enumerate(odd);
    ADD_FAILURE() << "head_dim 96 kept configs";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("splitkv.spec"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
