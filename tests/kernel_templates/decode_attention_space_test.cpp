// decode_attention's default config space (configs/spaces/decode_attention.toml) over the shipped
// shape set (configs/shapes/ops_decode_attention.toml): every kept config is accepted by the spec
// (whose rules filter the points), names are the spec's, each shape keeps several configs including
// SPLIT_K 1 and a split, the spec's default is accepted everywhere, and a head_dim the template
// lacks keeps nothing, counted under the spec.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "tuner/config_space.hpp"
#include "tuner/shape_set.hpp"

namespace ktune::kernel_templates {
namespace {

std::filesystem::path configs() {
  const char* dir = std::getenv("KTUNE_SOURCE_DIR");
  return std::filesystem::path(dir != nullptr ? dir : KTUNE_TEST_SOURCE_DIR) / "configs";
}

Config to_spec_config(const ktune::Config& c) {
  Config out;
  out.variant = c.variant;
  for (const auto& [name, value] : c.params) out.set(name, value);
  return out;
}

TEST(AttnSpace, SpaceAgreesWithSpecOverTheShapeSet) {
  const auto space = tuner::ConfigSpace::load(configs() / "spaces" / "decode_attention.toml");
  const auto shapes = tuner::load_shape_set(configs() / "shapes" / "ops_decode_attention.toml");
  ASSERT_EQ(space.kernel(), "decode_attention");
  ASSERT_EQ(shapes.kernel, "decode_attention");
  const KernelSpec& spec = find_spec("decode_attention", "splitkv");
  ASSERT_EQ(space.dims(), spec.dims());
  ASSERT_EQ(shapes.shapes.size(), 36u);  // 4 models x 3 batches x 3 contexts
  std::size_t checked = 0;
  for (const auto& shape : shapes.shapes) {
    tuner::ProblemContext ctx;
    ctx.dims = shape.dims;
    ctx.elem_bytes = 2;
    ctx.dtype = "bf16";
    ctx.layout = "";
    const Problem problem{shape.dims, DType::kBF16, ""};
    const auto e = space.enumerate(ctx);
    EXPECT_GE(e.configs.size(), 10u) << shape.label << ": " << e.summary();
    bool unsplit = false;
    bool split = false;
    for (const auto& c : e.configs) {
      const Config sc = to_spec_config(c);
      const auto why = spec.rejection(problem, sc);
      EXPECT_FALSE(why.has_value()) << space.canonical_name(c, "bf16", "") << " " << shape.label << ": "
                                    << why.value_or("");
      EXPECT_EQ(spec.canonical_name(problem, sc), space.canonical_name(c, "bf16", ""));
      (sc.at("SPLIT_K") == 1 ? unsplit : split) = true;
      ++checked;
    }
    EXPECT_TRUE(unsplit && split) << shape.label;
    EXPECT_EQ(spec.rejection(problem, spec.default_config(problem)), std::nullopt) << shape.label;
  }
  EXPECT_GT(checked, 500u);
  tuner::ProblemContext odd;
  odd.dims = {{"batch", 1}, {"heads_q", 32}, {"heads_kv", 8}, {"seq", 4096}, {"head_dim", 96}};
  odd.elem_bytes = 2;
  odd.dtype = "bf16";
  try {
    space.enumerate(odd);
    ADD_FAILURE() << "head_dim 96 kept configs";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("splitkv.spec"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
