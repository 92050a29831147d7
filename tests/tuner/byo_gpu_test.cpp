// User kernels on the GPU (docs/byo.md): `ktune tune --kernel-dir` tunes both shipped examples
// with verified winners; a variant that writes one element past its output, and one that writes
// wrong values, are stored `incorrect` (the first with the buffer named) and never win; a
// `verify = false` variant's winner is stored and answered unverified; the runtime launches the
// transpose winner by name and its output is the exact transpose of random input; the gather
// example (an i32 index tensor filled with random row numbers) tunes to verified winners and its
// winner, launched by name, matches a host gather; an i32 output that differs by one in one element
// is `incorrect` (integers are compared exactly). Skips without a GPU.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "harness/context.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "ktune/error.hpp"
#include "ktune/ktune.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/tuner/loop_test_util.hpp"

namespace ktune::tuner {
namespace {

using testing::run_ktune;

const std::filesystem::path kExamples = std::filesystem::path(KTUNE_TEST_SOURCE_DIR) / "examples" / "byo";

bool has_gpu() {
  try {
    return harness::device_count() > 0;
  } catch (const Error&) {
    return false;
  }
}

#define REQUIRE_GPU() \
  if (!has_gpu()) GTEST_SKIP() << "no usable GPU: the user kernel sweeps need a CUDA device"

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A copy of the transpose example whose .cu (and .toml) have one replacement each.
std::filesystem::path transpose_variant(const test::TempDir& dir, const std::string& name,
                                        const std::string& cu_from, const std::string& cu_to,
                                        const std::string& toml_from = "", const std::string& toml_to = "") {
  const auto folder = dir / name;
  std::filesystem::create_directories(folder);
  std::string cu = read(kExamples / "transpose" / "transpose.cu");
  std::string toml = read(kExamples / "transpose" / "transpose.toml");
  if (!cu_from.empty()) {
    const auto at = cu.find(cu_from);
    EXPECT_NE(at, std::string::npos) << cu_from;
    cu.replace(at, cu_from.size(), cu_to);
  }
  if (!toml_from.empty()) {
    const auto at = toml.find(toml_from);
    EXPECT_NE(at, std::string::npos) << toml_from;
    toml.replace(at, toml_from.size(), toml_to);
  }
  std::ofstream(folder / "transpose.cu") << cu;
  std::ofstream(folder / "transpose.toml") << toml;
  return folder;
}

std::vector<std::string> tune_args(const std::filesystem::path& folder, const std::string& kernel,
                                   const std::string& shape, const std::string& dtype,
                                   const std::string& db) {
  return {"tune",    "--kernel-dir", folder.string(), "--kernel",   kernel, "--shape", shape,
          "--dtype", dtype,          "--strategy",    "exhaustive", "--db", db,        "--json"};
}

/// Every stored candidate of `db` by config name.
std::map<std::string, cache::StoredMeasurement> by_config(const std::string& db_path) {
  auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
  std::map<std::string, cache::StoredMeasurement> out;
  for (const auto& m : test::all_measurements(db)) {
    if (m.m.baseline.empty()) out[m.m.config_name] = m;
  }
  return out;
}

TEST(ByoGpu, BothExamplesTuneToVerifiedWinners) {
  REQUIRE_GPU();
  test::TempDir dir;
  struct Case {
    std::string kernel, shape, dtype;
  };
  for (const Case& c :
       {Case{"transpose", "rows=1000,cols=777", "f32"}, Case{"transpose", "rows=4096,cols=4096", "bf16"},
        Case{"layernorm", "rows=37,hidden=4096", "bf16"}, Case{"layernorm", "rows=300,hidden=1000", "f32"}}) {
    const std::string db = (dir / (c.kernel + c.dtype + ".db")).string();
    const auto r = run_ktune(tune_args(kExamples / c.kernel, c.kernel, c.shape, c.dtype, db));
    ASSERT_EQ(r.exit_code, 0) << c.kernel << " " << c.shape << "\n" << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    ASSERT_FALSE(doc.at("keys")[0].at("winner").is_null()) << r.out;
    const auto rows = by_config(db);
    int ok = 0;
    for (const auto& [name, m] : rows) {
      EXPECT_TRUE(m.m.verified) << name;
      if (m.m.outcome == Outcome::kOk) ++ok;
      // Every config of these examples is correct: nothing may be incorrect or crash.
      EXPECT_TRUE(m.m.outcome == Outcome::kOk || m.m.outcome == Outcome::kSkipped ||
                  m.m.outcome == Outcome::kExceedsLimits)
          << name << ": " << to_string(m.m.outcome) << " " << m.m.reason;
    }
    EXPECT_GT(ok, 3) << c.kernel;
    const auto query = run_ktune({"query", "--kernel-dir", (kExamples / c.kernel).string(), "--kernel",
                                  c.kernel, "--shape", c.shape, "--dtype", c.dtype, "--db", db, "--gpu",
                                  harness::query_device(0).name, "--json"});
    ASSERT_EQ(query.exit_code, 0) << query.err;
    EXPECT_EQ(nlohmann::json::parse(query.out).at("verified"), true) << query.out;
  }
}

TEST(ByoGpu, AWritePastTheEndAndAWrongResultAreIncorrectAndNeverWin) {
  REQUIRE_GPU();
  test::TempDir dir;
  // TILE 64 also writes one element just past the end of `out`; TILE 16 writes every value + 1.
  const auto folder =
      transpose_variant(dir, "bad", "  __syncthreads();\n",
                        "  __syncthreads();\n  if (TILE == 64 && blockIdx.x == 0 && blockIdx.y == 0 && "
                        "threadIdx.x == 0 && threadIdx.y == 0)\n"
                        "    out[static_cast<size_t>(rows) * cols] = tile[0][0];\n"
                        "  if (TILE == 16) tile[threadIdx.y][threadIdx.x] = "
                        "static_cast<T>(static_cast<float>(tile[threadIdx.y][threadIdx.x]) + 1.0f);\n"
                        "  __syncthreads();\n");
  const std::string db = (dir / "bad.db").string();
  const auto r = run_ktune(tune_args(folder, "transpose", "rows=512,cols=640", "f32", db));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto winner = nlohmann::json::parse(r.out).at("keys")[0].at("winner");
  ASSERT_FALSE(winner.is_null()) << r.out;
  const std::string winner_text = winner.dump();
  EXPECT_EQ(winner_text.find("tile64"), std::string::npos) << winner_text;
  EXPECT_EQ(winner_text.find("tile16"), std::string::npos) << winner_text;
  int past_end = 0;
  int wrong = 0;
  for (const auto& [name, m] : by_config(db)) {
    if (name.find(".tile64.") != std::string::npos) {
      EXPECT_EQ(m.m.outcome, Outcome::kIncorrect) << name << ": " << m.m.reason;
      EXPECT_NE(m.m.reason.find("past the end of buffer 'out'"), std::string::npos) << m.m.reason;
      ++past_end;
    } else if (name.find(".tile16.") != std::string::npos) {
      EXPECT_EQ(m.m.outcome, Outcome::kIncorrect) << name << ": " << m.m.reason;
      ++wrong;
    } else {
      EXPECT_EQ(m.m.outcome, Outcome::kOk) << name << ": " << m.m.reason;
    }
  }
  EXPECT_EQ(past_end, 5);  // ROWS 1, 2, 4, 8, 16
  EXPECT_EQ(wrong, 5);
}

TEST(ByoGpu, AReferenceThatDisagreesWithEveryConfigIsNamed) {
  REQUIRE_GPU();
  test::TempDir dir;
  // The reference copies instead of transposing: every config is (correctly) incorrect against it.
  const auto folder = transpose_variant(dir, "badref", "  out[c * rows + r] = in[i];", "  out[i] = in[i];");
  const std::string db = (dir / "r.db").string();
  auto args = tune_args(folder, "transpose", "rows=256,cols=320", "f32", db);
  args.pop_back();  // no --json: the key's summary line (stdout)
  const auto r = run_ktune(args);
  // A key with nothing correct could not be tuned (exit 1); its line names the likely culprit.
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("every config that ran disagrees with the reference (check the reference, "),
            std::string::npos)
      << r.out << r.err;
  for (const auto& [name, m] : by_config(db)) {
    EXPECT_NE(m.m.outcome, Outcome::kOk) << name;
  }
}

TEST(ByoGpu, VerifyFalseIsStoredAndAnsweredUnverified) {
  REQUIRE_GPU();
  test::TempDir dir;
  const std::string reference = read(kExamples / "transpose" / "transpose.toml");
  const auto ref_at = reference.find("[reference]");
  ASSERT_NE(ref_at, std::string::npos);
  const auto work_at = reference.find("[work]");
  // No [reference]; `verify = false` is a top-level key, so it goes before the first table.
  const auto folder =
      transpose_variant(dir, "unverified", "", "", reference.substr(ref_at, work_at - ref_at), "");
  const std::string toml = read(folder / "transpose.toml");
  std::ofstream(folder / "transpose.toml") << "verify = false\n" << toml;
  const std::string db = (dir / "u.db").string();
  const auto r = run_ktune(tune_args(folder, "transpose", "rows=256,cols=384", "f32", db));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& [name, m] : by_config(db)) EXPECT_FALSE(m.m.verified) << name;
  const auto q =
      run_ktune({"query", "--kernel-dir", folder.string(), "--kernel", "transpose", "--shape",
                 "rows=256,cols=384", "--dtype", "f32", "--db", db, "--gpu", harness::query_device(0).name});
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_NE(q.out.find("verified     NO"), std::string::npos) << q.out;
}

TEST(ByoGpu, TheRuntimeLaunchesTheTunedTransposeByName) {
  REQUIRE_GPU();
  test::TempDir dir;
  const std::string db = (dir / "rt.db").string();
  const int rows = 300;
  const int cols = 517;
  const std::string shape = "rows=300,cols=517";
  ASSERT_EQ(run_ktune(tune_args(kExamples / "transpose", "transpose", shape, "f32", db)).exit_code, 0);

  RuntimeOptions o;
  o.db_path = db;
  o.kernel_dirs = {(kExamples / "transpose").string()};
  Runtime rt(o);
  const ProblemDims dims = {{"rows", rows}, {"cols", cols}};
  const PlanInfo info = rt.prepare("transpose", dims, DType::kF32);
  EXPECT_EQ(info.source, PlanInfo::Source::kTuned);
  EXPECT_TRUE(info.verified);
  EXPECT_EQ(info.config_name.rfind("transpose.f32.", 0), 0u) << info.config_name;

  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> in(static_cast<size_t>(rows) * cols);
  for (float& v : in) v = dist(rng);
  harness::DeviceBuffer d_in = harness::DeviceBuffer::from_host(std::span<const float>(in));
  harness::DeviceBuffer d_out(in.size() * sizeof(float));
  rt.launch("transpose", dims, DType::kF32,
            {reinterpret_cast<void*>(d_in.get()), reinterpret_cast<void*>(d_out.get())}, nullptr);
  const std::vector<float> out = d_out.download_as<float>(in.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      ASSERT_EQ(out[static_cast<size_t>(c) * rows + r], in[static_cast<size_t>(r) * cols + c])
          << r << "," << c;
    }
  }
  EXPECT_THROW(rt.launch("transpose", dims, DType::kF32, {reinterpret_cast<void*>(d_in.get())}, nullptr),
               Error);
  EXPECT_THROW(rt.launch("no_such_kernel", dims, DType::kF32, {}, nullptr), Error);
}

TEST(ByoGpu, TheGatherWinnerLaunchedByNameMatchesAHostGather) {
  REQUIRE_GPU();
  test::TempDir dir;
  const std::string db = (dir / "gather.db").string();
  const int vocab = 5000;
  const int tokens = 300;
  const int hidden = 1000;
  const std::string shape = "vocab=5000,tokens=300,hidden=1000";
  for (const char* dtype : {"bf16", "f32"}) {
    const auto r = run_ktune(tune_args(kExamples / "gather", "gather", shape, dtype, db));
    ASSERT_EQ(r.exit_code, 0) << dtype << "\n" << r.err;
    ASSERT_FALSE(nlohmann::json::parse(r.out).at("keys")[0].at("winner").is_null()) << r.out;
  }
  int ok = 0;
  for (const auto& [name, m] : by_config(db)) {
    EXPECT_TRUE(m.m.verified) << name;
    if (m.m.outcome == Outcome::kOk) ++ok;
    EXPECT_TRUE(m.m.outcome == Outcome::kOk || m.m.outcome == Outcome::kSkipped ||
                m.m.outcome == Outcome::kExceedsLimits)
        << name << ": " << to_string(m.m.outcome) << " " << m.m.reason;
  }
  EXPECT_GT(ok, 6);

  RuntimeOptions o;
  o.db_path = db;
  o.kernel_dirs = {(kExamples / "gather").string()};
  Runtime rt(o);
  const ProblemDims dims = {{"vocab", vocab}, {"tokens", tokens}, {"hidden", hidden}};
  const PlanInfo info = rt.prepare("gather", dims, DType::kF32);
  EXPECT_EQ(info.source, PlanInfo::Source::kTuned);
  EXPECT_TRUE(info.verified);
  EXPECT_EQ(info.config_name.rfind("gather.f32.", 0), 0u) << info.config_name;

  std::mt19937 rng(23);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  std::uniform_int_distribution<int32_t> row(0, vocab - 1);
  std::vector<float> table(static_cast<size_t>(vocab) * hidden);
  for (float& v : table) v = value(rng);
  std::vector<int32_t> ids(tokens);
  for (int32_t& id : ids) id = row(rng);
  harness::DeviceBuffer d_table = harness::DeviceBuffer::from_host(std::span<const float>(table));
  harness::DeviceBuffer d_ids = harness::DeviceBuffer::from_host(std::span<const int32_t>(ids));
  harness::DeviceBuffer d_y(static_cast<size_t>(tokens) * hidden * sizeof(float));
  rt.launch("gather", dims, DType::kF32,
            {reinterpret_cast<void*>(d_table.get()), reinterpret_cast<void*>(d_ids.get()),
             reinterpret_cast<void*>(d_y.get())},
            nullptr);
  const std::vector<float> y = d_y.download_as<float>(static_cast<size_t>(tokens) * hidden);
  for (int t = 0; t < tokens; ++t) {
    for (int c = 0; c < hidden; ++c) {
      ASSERT_EQ(y[static_cast<size_t>(t) * hidden + c], table[static_cast<size_t>(ids[t]) * hidden + c])
          << "token " << t << " (row " << ids[t] << "), column " << c;
    }
  }
}

TEST(ByoGpu, AnIntegerOutputOffByOneInOneElementIsIncorrect) {
  REQUIRE_GPU();
  test::TempDir dir;
  // The gather also writes the row each token read, an i32 output; THREADS 64 writes the last
  // token's row + 1. The ids are a sequence this time: 5 + 3 t mod vocab.
  const auto folder = dir / "gather";
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "gather.cu") << R"(
template <int THREADS, int ROWS, typename T>
__global__ void gather(const T* table, const int* ids, T* y, int* rows_read, int tokens, int hidden) {
  const int t = blockIdx.x * ROWS + threadIdx.y;
  if (t >= tokens) return;
  const int row = ids[t];
  if (threadIdx.x == 0) rows_read[t] = (THREADS == 64 && t == tokens - 1) ? row + 1 : row;
  for (int c = threadIdx.x; c < hidden; c += THREADS) y[(size_t)t * hidden + c] = table[(size_t)row * hidden + c];
}
template <typename T>
__global__ void gather_reference(const T* table, const int* ids, T* y, int* rows_read, int tokens, int hidden) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (size_t)tokens * hidden) return;
  const size_t t = i / hidden;
  y[i] = table[(size_t)ids[t] * hidden + i % hidden];
  if (i % hidden == 0) rows_read[t] = ids[t];
}
)";
  std::string toml = read(kExamples / "gather" / "gather.toml");
  const auto fill_at = toml.find("fill = { min = 0, max = \"vocab - 1\" }");
  ASSERT_NE(fill_at, std::string::npos);
  toml.replace(fill_at, 37, "fill = { sequence = { start = 5, step = 3, modulo = \"vocab\" } }");
  const auto scalars_at = toml.find("[[arg]]\nname = \"tokens\"");
  ASSERT_NE(scalars_at, std::string::npos);
  toml.insert(scalars_at,
              "[[arg]]\nname = \"rows_read\"\nkind = \"output\"\ntype = \"i32\"\nelements = \"tokens\"\n\n");
  std::ofstream(folder / "gather.toml") << toml;

  const std::string db = (dir / "int.db").string();
  const auto r = run_ktune(tune_args(folder, "gather", "vocab=1000,tokens=300,hidden=256", "f32", db));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string winner = nlohmann::json::parse(r.out).at("keys")[0].at("winner").dump();
  EXPECT_EQ(winner.find("threads64"), std::string::npos) << winner;
  int off_by_one = 0;
  for (const auto& [name, m] : by_config(db)) {
    if (m.m.outcome == Outcome::kSkipped || m.m.outcome == Outcome::kExceedsLimits) continue;
    if (name.find(".threads64.") != std::string::npos) {
      EXPECT_EQ(m.m.outcome, Outcome::kIncorrect) << name;
      EXPECT_NE(m.m.reason.find("output 'rows_read'"), std::string::npos) << m.m.reason;
      EXPECT_NE(m.m.reason.find("compared exactly"), std::string::npos) << m.m.reason;
      ++off_by_one;
    } else {
      EXPECT_EQ(m.m.outcome, Outcome::kOk) << name << ": " << m.m.reason;
    }
  }
  EXPECT_EQ(off_by_one, 4);  // ROWS 1, 2, 4, 8
}

}  // namespace
}  // namespace ktune::tuner
