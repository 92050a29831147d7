// ktune::Runtime records the keys it serves without a tuned config (RuntimeOptions::record_misses,
// Runtime::record_misses, $KTUNE_RECORD_MISSES): three shapes missed through prepare() are named
// in the file, once each, a key prepared again is not written again, a second Runtime of the
// process on the same file does not repeat them, a key refused by MissPolicy::kError is named too
// (ktune.torch_model asks that way whether a key is tuned), and nothing is written for a tuned key. The
// file is a key list `ktune tune --shapes FILE` reads (tuner/inputs/key_list.hpp).

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "ktune/ktune.hpp"
#include "runtime/miss_recorder.hpp"
#include "tests/tuner/gpu_test_util.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/inputs/key_list.hpp"

namespace ktune::runtime {
namespace {

namespace test = ::ktune::tuner::test;

std::vector<std::string> key_lines(const std::filesystem::path& p) {
  std::vector<std::string> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

TEST(RecordMissesGpu, ThreeMissedShapesAreNamedOnceEach) {
  KTUNE_SKIP_WITHOUT_GPU();
  test::TempDir dir;
  const auto file = dir / "misses.keys";
  RuntimeOptions o;
  o.db_path = (dir / "none.db").string();  // no database: every key is a miss
  o.record_misses = file.string();
  {
    Runtime rt(o);
    EXPECT_EQ(rt.prepare(GemmArgs{.m = 24, .n = 4096, .k = 4096, .layout = Layout::kNT}).source,
              PlanInfo::Source::kDefault);
    rt.prepare(RmsNormArgs{.rows = 7, .hidden = 4095, .dtype = DType::kF16});
    rt.prepare(SoftmaxArgs{.rows = 4, .cols = 1000, .mask = SoftmaxMask::kCausal, .dtype = DType::kF32});
    rt.prepare(GemmArgs{.m = 24, .n = 4096, .k = 4096, .layout = Layout::kNT});  // prepared already
  }
  const std::set<std::string> want{"gemm m=24,n=4096,k=4096 bf16 nt", "rmsnorm rows=7,hidden=4095 f16",
                                   "softmax rows=4,cols=1000 f32 causal"};
  auto lines = key_lines(file);
  EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()), want);
  EXPECT_EQ(lines.size(), want.size());

  // A second Runtime of this process, through the environment: the same keys are not repeated, a
  // new one is added.
  ::setenv("KTUNE_RECORD_MISSES", file.string().c_str(), 1);
  {
    RuntimeOptions env_only;
    env_only.db_path = o.db_path;
    Runtime rt(env_only);
    rt.prepare(RmsNormArgs{.rows = 7, .hidden = 4095, .dtype = DType::kF16});
    rt.prepare(GemmArgs{.m = 5, .n = 256, .k = 512, .layout = Layout::kNN});
  }
  ::unsetenv("KTUNE_RECORD_MISSES");
  lines = key_lines(file);
  EXPECT_EQ(lines.size(), want.size() + 1);
  EXPECT_EQ(lines.back(), "gemm m=5,n=256,k=512 bf16 nn");

  // The file is what `ktune tune --shapes` reads.
  ASSERT_TRUE(tuner::is_key_list(file));
  EXPECT_EQ(tuner::load_key_list(file).size(), 4u);
}

TEST(RecordMissesGpu, RecordingStartsAndStopsOnRequest) {
  KTUNE_SKIP_WITHOUT_GPU();
  test::TempDir dir;
  const auto file = dir / "later.keys";
  RuntimeOptions o;
  o.db_path = (dir / "none.db").string();
  Runtime rt(o);
  rt.prepare(RmsNormArgs{.rows = 2, .hidden = 512});
  rt.record_misses(file.string());
  rt.prepare(RmsNormArgs{.rows = 3, .hidden = 512});
  rt.record_misses("");
  rt.prepare(RmsNormArgs{.rows = 4, .hidden = 512});
  EXPECT_EQ(key_lines(file), (std::vector<std::string>{"rmsnorm rows=3,hidden=512 bf16"}));
  EXPECT_THROW(rt.record_misses((dir / "no-such-folder" / "x.keys").string()), Error);
}

TEST(RecordMissesGpu, AKeyRefusedByTheErrorPolicyIsNamed) {
  KTUNE_SKIP_WITHOUT_GPU();
  test::TempDir dir;
  const auto file = dir / "refused.keys";
  RuntimeOptions o;
  o.db_path = (dir / "none.db").string();
  o.on_miss = MissPolicy::kError;
  o.record_misses = file.string();
  Runtime rt(o);
  try {
    rt.prepare(GemmArgs{.m = 3, .n = 896, .k = 896, .layout = Layout::kNT, .epilogue = Epilogue::kBias});
    ADD_FAILURE() << "an untuned key was served under MissPolicy::kError";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound) << e.what();
  }
  EXPECT_EQ(key_lines(file), (std::vector<std::string>{"gemm m=3,n=896,k=896 bf16 nt+bias"}));
  EXPECT_EQ(rt.prepared_plans(), 0u);
}

}  // namespace
}  // namespace ktune::runtime
