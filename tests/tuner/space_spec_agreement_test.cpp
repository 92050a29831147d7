// The default gemm space keeps only configs the kernel templates' specs accept (their rules filter the
// points after the space's constraints, so nothing is compiled in vain), under the specs' names.
#include <gtest/gtest.h>

#include "core/dtype.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "test_util.hpp"
#include "tuner/config_space.hpp"

namespace ktune::tuner {
namespace {

TEST(SpaceSpecAgreement, EveryKeptGemmConfigIsAcceptedByItsSpec) {
  const auto space = ConfigSpace::load(test::source_configs() / "spaces" / "gemm.toml");
  size_t checked = 0;
  // Odd and round shapes; decode and prefill.
  const std::vector<std::vector<std::pair<std::string, int64_t>>> shapes = {
      {{"m", 1}, {"n", 4096}, {"k", 4096}},
      {{"m", 13}, {"n", 1000}, {"k", 777}},
      {{"m", 16}, {"n", 128256}, {"k", 4096}},
      {{"m", 333}, {"n", 3584}, {"k", 18944}},
  };
  for (const auto& dims : shapes) {
    for (const char* dtype : {"f32", "f16", "bf16"}) {
      for (const char* layout : {"nt", "nn"}) {
        ProblemContext ctx;
        ctx.dims = dims;
        ctx.elem_bytes = dtype_bytes(dtype);
        ctx.dtype = dtype;
        ctx.layout = layout;
        kernel_templates::Problem problem;
        problem.dims = dims;
        problem.dtype = ktune::dtype_from_string(dtype);
        problem.layout = layout;
        const auto e = space.enumerate(ctx);
        for (const auto& c : e.configs) {
          const auto& spec = kernel_templates::find_spec("gemm", c.variant);
          const auto why = spec.rejection(problem, c);
          EXPECT_FALSE(why.has_value()) << space.canonical_name(c, dtype, layout) << " "
                                        << problem.shape_text() << ": " << why.value_or("");
          EXPECT_EQ(spec.canonical_name(problem, c), space.canonical_name(c, dtype, layout));
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 1000u);
}

}  // namespace
}  // namespace ktune::tuner
