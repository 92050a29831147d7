// decode_attention's default config space (configs/spaces/decode_attention.toml) against its spec
// over the shipped shape set (configs/shapes/ops_decode_attention.toml): every kept config is
// accepted by the spec, names agree, each shape keeps several configs including SPLIT_K 1 and a
// split, and the space's default is accepted everywhere.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "kernel_templates/spec_registry.hpp"
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
  const auto default_config = space.default_config();
  ASSERT_TRUE(default_config.has_value());
  std::size_t checked = 0;
  for (const auto& shape : shapes.shapes) {
    tuner::ProblemContext ctx;
    ctx.dims = shape.dims;
    ctx.elem_bytes = 2;
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
    EXPECT_EQ(spec.rejection(problem, to_spec_config(*default_config)), std::nullopt) << shape.label;
  }
  EXPECT_GT(checked, 500u);
}

}  // namespace
}  // namespace ktune::kernel_templates
