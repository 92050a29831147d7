#include "tuner/inputs/shape_set.hpp"

#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kernel_templates/kernel_catalog.hpp"
#include "test_util.hpp"
#include "tuner/inputs/preset.hpp"

namespace ktune::tuner {
namespace {

const std::vector<int64_t> kM = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};

class ConfigsDir : public ::testing::Test {
 protected:
  void SetUp() override { setenv("KTUNE_CONFIGS_DIR", test::source_configs().c_str(), 1); }
};

TEST_F(ConfigsDir, ModelShapeSetsHaveTheRightLayers) {
  struct Want {
    const char* file;
    int64_t hidden, gate, mlp, vocab, kv;  // gate: n of the gate (or fused gate_up) projection
  };
  for (const Want& w : {Want{"llama3-8b", 4096, 14336, 14336, 128256, 1024},
                        Want{"qwen3-0.6b", 1024, 3072, 3072, 151936, 1024},
                        Want{"qwen2.5-7b", 3584, 18944, 18944, 152064, 512},
                        Want{"glm4-9b", 4096, 2 * 13696, 13696, 151552, 256}}) {
    const ShapeSet set = load_shape_set(resolve_config_file(w.file, "shapes"));
    EXPECT_EQ(set.kernel, "gemm");
    std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
    for (const auto& s : set.shapes) shapes.emplace(s.at("m"), s.at("n"), s.at("k"));
    EXPECT_EQ(shapes.size(), set.shapes.size()) << w.file << ": duplicate shapes";
    for (int64_t m : kM) {
      EXPECT_TRUE(shapes.contains({m, w.gate, w.hidden})) << w.file << " gate/up m=" << m;
      EXPECT_TRUE(shapes.contains({m, w.hidden, w.mlp})) << w.file << " down m=" << m;
      EXPECT_TRUE(shapes.contains({m, w.vocab, w.hidden})) << w.file << " lm_head m=" << m;
      EXPECT_TRUE(shapes.contains({m, w.kv, w.hidden})) << w.file << " k/v m=" << m;
    }
    EXPECT_EQ(set.shapes.size() % kM.size(), 0u);
  }
}

TEST_F(ConfigsDir, EveryShapeNormalisesForTheKernelDims) {
  const auto* gemm = kernel_templates::find_kernel("gemm");
  for (const char* file : {"llama3-8b", "qwen3-0.6b", "qwen2.5-7b", "glm4-9b"}) {
    const ShapeSet set = load_shape_set(resolve_config_file(file, "shapes"));
    ASSERT_EQ(set.dims, gemm->dims);
    for (const auto& s : set.shapes) {
      const NamedShape n = s.normalized(gemm->dims);
      EXPECT_EQ(n.canonical(), fmt::format("m={},n={},k={}", s.at("m"), s.at("n"), s.at("k")));
      EXPECT_NE(s.label.find(file), std::string::npos);
    }
  }
}

TEST_F(ConfigsDir, PresetsLoadAndSelectWhatTheySay) {
  const auto names = list_presets();
  EXPECT_EQ(names, (std::vector<std::string>{"llm-decode", "llm-prefill", "quick", "qwen3-0.6b-decode"}));
  const auto* gemm = kernel_templates::find_kernel("gemm");
  for (const auto& name : names) {
    const Preset p = load_preset(name);
    EXPECT_EQ(p.kernel, "gemm") << name;
    EXPECT_FALSE(p.shapes.empty()) << name;
    EXPECT_GT(p.budget, 0u) << name;
    for (const DType dt : p.dtypes) EXPECT_TRUE(gemm->supports(dt)) << name << " " << to_string(dt);
    std::set<std::string> canon;
    for (const auto& s : p.shapes) {
      EXPECT_EQ(s.normalized(gemm->dims).canonical(), s.canonical());
      EXPECT_TRUE(canon.insert(s.canonical()).second) << "duplicate " << s.canonical();
      if (name == "llm-decode") {
        EXPECT_LE(s.at("m"), 16);
      }
      if (name == "llm-prefill") {
        EXPECT_GE(s.at("m"), 128);
      }
    }
  }
  const Preset quick = load_preset("quick");
  EXPECT_EQ(quick.strategy, "model");
  EXPECT_LE(quick.budget * quick.shapes.size(), 200u);  // a small sweep
  std::vector<std::string> canon;
  for (const auto& s : quick.shapes) canon.push_back(s.canonical());
  EXPECT_EQ(canon, (std::vector<std::string>{"m=1,n=4096,k=4096", "m=16,n=4096,k=4096", "m=128,n=4096,k=4096",
                                             "m=16,n=4096,k=14336"}));
  // llm-decode: 3 models, 7 + 8 + 7 layers, 5 values of M <= 16, minus shapes two models share.
  EXPECT_GT(load_preset("llm-decode").shapes.size(), 90u);
}

TEST_F(ConfigsDir, BadPresetsAndShapeSets) {
  test::expect_bad_input([] { load_preset("no-such-preset"); }, {"no-such-preset", "quick"});
  test::TempFile bad_where("p.toml",
                           "kernel = \"gemm\"\ndtypes = [\"bf16\"]\nstrategy = \"model\"\n[[select]]\n"
                           "shapes = \"llama3-8b\"\nwhere = \"mm <= 16\"\n");
  test::expect_bad_input([&] { load_preset(bad_where.path().string()); }, {"p.toml:6:", "'mm'"});
  test::TempFile bad_strategy("p.toml",
                              "kernel = \"gemm\"\ndtypes = [\"bf16\"]\nstrategy = \"greedy\"\n[[select]]\n"
                              "shapes = \"llama3-8b\"\n");
  test::expect_bad_input([&] { load_preset(bad_strategy.path().string()); }, {"p.toml:3:", "greedy"});
  test::TempFile bad_dtype("p.toml",
                           "kernel = \"gemm\"\ndtypes = [\"bf17\"]\nstrategy = \"model\"\n[[select]]\n"
                           "shapes = \"llama3-8b\"\n");
  test::expect_bad_input([&] { load_preset(bad_dtype.path().string()); }, {"p.toml:2:", "bf17"});
  test::TempFile bad_layer("p.toml",
                           "kernel = \"gemm\"\ndtypes = [\"bf16\"]\nstrategy = \"model\"\n[[select]]\n"
                           "shapes = \"llama3-8b\"\nlayers = [\"q_prog\"]\n");
  test::expect_bad_input([&] { load_preset(bad_layer.path().string()); }, {"p.toml:6:", "q_prog"});
  test::TempFile bad_set("s.toml",
                         "kernel = \"gemm\"\ndims = [\"m\", \"n\", \"k\"]\n[sweep]\nm = [1, 2]\n[[layer]]\n"
                         "name = \"x\"\nn = 4\nk = 0\n");
  test::expect_bad_input([&] { load_shape_set(bad_set.path()); }, {"s.toml:8:", "k = 0"});
  test::TempFile missing_dim(
      "s.toml",
      "kernel = \"gemm\"\ndims = [\"m\", \"n\", \"k\"]\n[sweep]\nm = [1, 2]\n[[layer]]\n"
      "name = \"x\"\nn = 4\n");
  test::expect_bad_input([&] { load_shape_set(missing_dim.path()); }, {"s.toml:5:", "'k'"});
}

}  // namespace
}  // namespace ktune::tuner
