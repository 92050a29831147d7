// A prebuilt user kernel's space (its description is its space, docs/byo.md) holds, for a key with
// a [[prune]] in the cubin index, the kept configs only: the spec refuses the others, so neither
// the enumeration nor the seeds propose them; every other key keeps every config.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "kernel_templates/user_kernel/user_kernels.hpp"
#include "test_util.hpp"
#include "tuner/space/config_space.hpp"

namespace ktune::tuner {
namespace {

namespace fs = std::filesystem;

constexpr const char* kToml = R"(dims = ["rows", "cols"]
dtypes = ["bf16"]

[[template]]
name = "rows_kernel"
seeds = [{ BLOCK = 1024, num_warps = 4 }]
[template.params]
BLOCK = [512, 1024]
num_warps = [4, 8]

[[arg]]
name = "x"
kind = "input"
elements = "rows * cols"

[[arg]]
name = "y"
kind = "output"
elements = "rows * cols"

[[launch]]
grid = "rows"

[reference]
config = { BLOCK = 1024, num_warps = 4 }

[prebuilt]
arch = "sm_90"
producer = "triton 3.6.0"
)";

/// Keeps two of the four configs at rows=6,cols=1000; the seed is not one of them.
constexpr const char* kPrune = R"(
[[prune]]
dtype = "bf16"
shape = { rows = 6, cols = 1000 }
keep = [{ BLOCK = 512, num_warps = 8 }, { BLOCK = 1024, num_warps = 8 }]
)";

class PrebuiltPruneSpace : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ktune_prune_space_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "rows.cubins");
    std::ofstream(dir_ / "rows.toml") << kToml;
    std::ofstream(dir_ / "rows.cubins" / "a.cubin") << "not loaded here";
    std::string index;
    for (const int block : {512, 1024}) {
      for (const int warps : {4, 8}) {
        index += fmt::format(R"([[cubin]]
config = {{ BLOCK = {}, num_warps = {} }}
dtype = "bf16"
file = "a.cubin"
entry = "rows_kernel"
threads = {}

)",
                             block, warps, 32 * warps);
      }
    }
    std::ofstream(dir_ / "rows.cubins" / "index.toml") << index << kPrune;
    kernel_templates::load_kernel_folder(dir_);
  }
  void TearDown() override {
    kernel_templates::clear_user_kernels();
    fs::remove_all(dir_);
  }

  static ProblemContext context(int64_t rows, int64_t cols) {
    ProblemContext c;
    c.dims = {{"rows", rows}, {"cols", cols}};
    c.dtype = DType::kBF16;
    return c;
  }

  fs::path dir_;
};

TEST_F(PrebuiltPruneSpace, ThePrunedKeyEnumeratesTheKeptConfigsOnly) {
  const ConfigSpace space = ConfigSpace::load(dir_ / "rows.toml");
  const Enumeration pruned = space.enumerate(context(6, 1000));
  EXPECT_EQ(pruned.total, 4u);
  ASSERT_EQ(pruned.configs.size(), 2u) << pruned.summary();
  EXPECT_EQ(pruned.configs[0], Config("rows_kernel", {{"BLOCK", 512}, {"num_warps", 8}}));
  EXPECT_EQ(pruned.configs[1], Config("rows_kernel", {{"BLOCK", 1024}, {"num_warps", 8}}));
  EXPECT_NE(pruned.first_spec_rejection.find("prune_configs_by keeps 2 of the configs for rows=6,cols=1000"),
            std::string::npos)
      << pruned.first_spec_rejection;
  // the seed (w4) is not kept: not proposed for this key
  EXPECT_TRUE(pruned.seeds.empty());
  EXPECT_EQ(pruned.seed_rejected, 1u);
  // another shape: every config and the seed
  const Enumeration other = space.enumerate(context(6, 1024));
  EXPECT_EQ(other.configs.size(), 4u) << other.summary();
  EXPECT_EQ(other.seeds.size(), 1u);
}

}  // namespace
}  // namespace ktune::tuner
