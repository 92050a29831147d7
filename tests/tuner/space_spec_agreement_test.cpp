// The default gemm space keeps only configs the kernel templates' specs accept (their rules filter the
// points after the space's constraints, so nothing is compiled in vain), under the specs' names; and
// every key the runtime can record has configs in its kernel's shipped space.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/dtype.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "test_util.hpp"
#include "tuner/space/config_space.hpp"

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
    for (const DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (const char* layout : {"nt", "nn", "nt+bias"}) {
        ProblemContext ctx;
        ctx.dims = dims;
        ctx.elem_bytes = static_cast<int64_t>(size_of(dtype));
        ctx.dtype = dtype;
        ctx.layout = layout;
        kernel_templates::Problem problem;
        problem.dims = dims;
        problem.dtype = dtype;
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

namespace ktune::tuner {
namespace {

/// "m=16,n=4096,k=4096" as dims.
std::vector<std::pair<std::string, int64_t>> dims_of(const std::string& shape) {
  std::vector<std::pair<std::string, int64_t>> dims;
  std::size_t at = 0;
  while (at < shape.size()) {
    const std::size_t comma = std::min(shape.find(',', at), shape.size());
    const std::string part = shape.substr(at, comma - at);
    const std::size_t eq = part.find('=');
    dims.emplace_back(part.substr(0, eq), std::stoll(part.substr(eq + 1)));
    at = comma + 1;
  }
  return dims;
}

// Record-then-tune holds for every key: each (kernel, layout, dtype) the runtime accepts (the
// catalog's, which the runtime's bindings take) has configs in the shipped space, at the kernel's
// example shape and, for gemm, at a decode and a prefill shape of a model with biased projections
// (Qwen2.5-0.5B: hidden 896, fused qkv 1152, MLP 4864) and an odd one.
TEST(SpaceSpecAgreement, EveryKeyTheRuntimeAcceptsHasConfigsInTheShippedSpace) {
  std::size_t keys = 0;
  for (const auto& kernel : kernel_templates::kernel_catalog()) {
    if (kernel_templates::specs_of(kernel.name).empty()) continue;  // "copy": the harness's, not an op
    const auto path = test::source_configs() / "spaces" / (kernel.name + ".toml");
    ASSERT_TRUE(std::filesystem::exists(path)) << kernel.name << " ships no space";
    const auto space = ConfigSpace::load(path);
    std::vector<std::string> shapes = {kernel.example_shape()};
    if (kernel.name == "gemm") {
      shapes.insert(shapes.end(), {"m=1,n=1152,k=896", "m=128,n=896,k=4864", "m=3,n=100,k=77"});
    }
    for (const auto& shape : shapes) {
      for (const DType dtype : kernel.dtypes) {
        for (const auto& layout : kernel.layouts) {
          ProblemContext ctx;
          ctx.dims = dims_of(shape);
          ctx.elem_bytes = static_cast<int64_t>(size_of(dtype));
          ctx.dtype = dtype;
          ctx.layout = layout;
          try {
            const auto e = space.enumerate(ctx);
            EXPECT_FALSE(e.configs.empty())
                << kernel.name << " " << shape << " " << to_string(dtype) << " " << layout;
          } catch (const std::exception& err) {
            ADD_FAILURE() << kernel.name << " " << shape << " " << to_string(dtype) << " '" << layout
                          << "': " << err.what();
          }
          ++keys;
        }
      }
    }
  }
  EXPECT_GT(keys, 100u);
}

}  // namespace
}  // namespace ktune::tuner
