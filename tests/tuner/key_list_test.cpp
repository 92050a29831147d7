// Key lists as the session reads them (tuner/inputs/key_list.hpp through plan_session): each key keeps its
// own kernel, dtype and layout (absent: the kernel's default), shapes are normalised, repeats are
// dropped, --kernel and a preset filter, --dtype/--layout are refused, and a bad line is named by
// FILE:LINE.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "ktune/error.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tests/tuner/test_util.hpp"
#include "tuner/inputs/key_list.hpp"
#include "tuner/inputs/preset.hpp"
#include "tuner/loop/tuning_session.hpp"

namespace ktune::tuner {
namespace {

class KeyList : public ::testing::Test {
 protected:
  void SetUp() override { setenv("KTUNE_CONFIGS_DIR", test::source_configs().c_str(), 1); }
  std::string write(const std::string& text) {
    const auto p = dir_ / ("keys" + std::to_string(n_++) + ".txt");
    std::ofstream(p) << text;
    return p.string();
  }
  std::vector<SessionJob> plan(SessionRequest r) {
    TuneOptions o;
    return plan_session(r, o);
  }
  std::string error_of(SessionRequest r) {
    try {
      plan(std::move(r));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
      return e.what();
    }
    return "";
  }

  test::TempDir dir_;
  int n_ = 0;
};

constexpr const char* kRecorded =
    "# keys ktune::Runtime served without a tuned config\n"
    "gemm k=4096,m=24,n=4096 bf16 nt\n"
    "rmsnorm rows=7,hidden=4095 f16\n"
    "\n"
    "gemm m=24,n=4096,k=4096 bf16 nt\n"  // the first key again, dims in order
    "gemm m=24,n=4096,k=4096 f16 nn+bias\n"
    "softmax rows=4,cols=1000 f32 causal\n"
    "swiglu m=3,i=1000 bf16\n";

TEST_F(KeyList, EachKeyKeepsItsOwnKernelDtypeAndLayout) {
  const std::string file = write(kRecorded);
  EXPECT_TRUE(is_key_list(file));
  EXPECT_EQ(load_key_list(file).size(), 6u);
  SessionRequest r;
  r.shapes_file = file;
  const auto jobs = plan(r);
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].kernel, "gemm");
  ASSERT_EQ(jobs[0].keys.size(), 2u) << "the repeated key is tuned once";
  EXPECT_EQ(jobs[0].keys[0].shape.canonical(), "m=24,n=4096,k=4096");
  EXPECT_EQ(jobs[0].keys[0].dtype, DType::kBF16);
  EXPECT_EQ(jobs[0].keys[0].layout, "nt");
  EXPECT_EQ(jobs[0].keys[1].dtype, DType::kF16);
  EXPECT_EQ(jobs[0].keys[1].layout, "nn+bias");
  EXPECT_EQ(jobs[1].kernel, "rmsnorm");
  EXPECT_EQ(jobs[1].keys.at(0).layout, "");
  EXPECT_EQ(jobs[2].kernel, "softmax");
  EXPECT_EQ(jobs[2].keys.at(0).layout, "causal");
  EXPECT_EQ(jobs[3].kernel, "swiglu");
  EXPECT_EQ(jobs[3].keys.at(0).layout, "fused") << "no layout: the kernel's default";
}

TEST_F(KeyList, KernelAndPresetFilterTheKeys) {
  SessionRequest r;
  r.shapes_file = write(kRecorded);
  r.kernels = {"rmsnorm", "softmax"};
  const auto jobs = plan(r);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].kernel, "rmsnorm");
  EXPECT_EQ(jobs[1].kernel, "softmax");

  SessionRequest p;
  p.shapes_file = r.shapes_file;
  p.preset = "llm-decode";  // gemm: its strategy and budget, and only the gemm keys
  TuneOptions o;
  const auto preset_jobs = plan_session(p, o);
  ASSERT_EQ(preset_jobs.size(), 1u);
  EXPECT_EQ(preset_jobs[0].kernel, "gemm");
  EXPECT_GT(o.budget, 0u);

  SessionRequest none = r;
  none.kernels = {"decode_attention"};
  EXPECT_NE(error_of(none).find("holds no key of decode_attention"), std::string::npos);
}

TEST_F(KeyList, DtypeAndLayoutFlagsAreRefused) {
  SessionRequest r;
  r.shapes_file = write(kRecorded);
  r.dtypes = {"f16"};
  EXPECT_NE(error_of(r).find("is a key list"), std::string::npos);
  r.dtypes.clear();
  r.layout = "nt";
  EXPECT_NE(error_of(r).find("--dtype and --layout do not go with it"), std::string::npos);
}

TEST_F(KeyList, WithoutOneTheRequestsDtypesAreReadForEachKernelElseThePresetsElseBf16) {
  SessionRequest r;
  r.kernels = {"rmsnorm"};
  r.shapes = {"rows=7,hidden=4095"};
  r.dtypes = {"f16", "f32"};
  const auto jobs = plan(r);
  ASSERT_EQ(jobs.at(0).keys.size(), 2u);
  EXPECT_EQ(jobs[0].keys[0].dtype, DType::kF16);
  EXPECT_EQ(jobs[0].keys[1].dtype, DType::kF32);
  for (const char* bad : {"fp8e4m3", "f64"}) {
    r.dtypes = {bad};
    EXPECT_NE(error_of(r).find("kernel 'rmsnorm' does not support dtype '" + std::string(bad) +
                               "' (supported: f32, f16, bf16)"),
              std::string::npos)
        << bad;
  }
  r.dtypes.clear();
  EXPECT_EQ(plan(r).at(0).keys.at(0).dtype, DType::kBF16);

  SessionRequest p;
  p.preset = "llm-decode";
  const std::vector<DType> preset = load_preset("llm-decode").dtypes;
  ASSERT_FALSE(preset.empty());
  const auto preset_jobs = plan(p);
  ASSERT_FALSE(preset_jobs.at(0).keys.empty());
  for (const TuneKey& k : preset_jobs[0].keys)
    EXPECT_NE(std::find(preset.begin(), preset.end(), k.dtype), preset.end()) << to_string(k.dtype);
}

TEST_F(KeyList, ABadLineIsNamedByFileAndLine) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c :
       {Case{"gemm m=1,n=2,k=3 bf16 nt\ngemm m=1,n=2 bf16 nt\n", ":2: "},
        Case{"gemm m=1,n=2,k=3 bf16 nt\ngemmm m=1,n=2,k=3 bf16\n", "'gemmm'"},
        Case{"gemm m=1,n=2,k=3 fp8e4m3 nt\n", "does not support dtype 'fp8e4m3' (supported: f32, f16, bf16)"},
        Case{"gemm m=1,n=2,k=3 bf16 nt\ngemm m=1,n=2,k=3 f64 nt\n",
             ":2: unknown dtype 'f64' (known: f32, f16"},
        Case{"softmax rows=1,cols=2 f32 nt\n", "causal"},
        Case{"gemm m=1,n=2,k=3 bf16 nt\nrmsnorm rows=1\n", ":2: "},
        Case{"# only a comment\n", "holds no key"}}) {
    SessionRequest r;
    r.shapes_file = write(c.text);
    const std::string e = error_of(r);
    EXPECT_NE(e.find(c.says), std::string::npos) << c.text << " -> " << e;
    if (std::string(c.says) != "holds no key") {
      EXPECT_NE(e.find(r.shapes_file), std::string::npos) << c.text << " -> " << e;
    }
  }
}

TEST_F(KeyList, AShapeSetIsStillAShapeSet) {
  EXPECT_FALSE(is_key_list(test::source_configs() / "shapes" / "llama3-8b.toml"));
  SessionRequest r;
  r.kernels = {"gemm"};
  r.shapes_file = "llama3-8b";
  EXPECT_GT(plan(r).at(0).keys.size(), 10u);
}

}  // namespace
}  // namespace ktune::tuner
