// Record, then tune: keys recorded by several processes through the runtime's miss recorder
// (runtime/miss_recorder.hpp, what ktune::Runtime does with record_misses) are tuned by
// `ktune tune --shapes FILE --compile-only` (NVRTC, no GPU): the database then holds exactly those
// keys, each with its own kernel, dtype and layout; two shards of the file cover it.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "runtime/miss_recorder.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string>;  // kernel, shape, dtype, layout

std::set<Key> keys_in(const std::string& db_path) {
  std::set<Key> keys;
  auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
  db.for_each_measurement({}, [&](const cache::StoredMeasurement& m) {
    keys.insert({m.kernel.name, m.m.shape, to_string(m.m.dtype), m.m.layout});
  });
  return keys;
}

std::vector<std::string> sweep(const std::string& file, const std::string& db) {
  // One evaluation a key keeps the compiles few (gemm's space is large).
  return {"tune",
          "--shapes",
          file,
          "--compile-only",
          "--arch",
          "sm_90",
          "--strategy",
          "exhaustive",
          "--budget",
          "1",
          "--compile-threads",
          "2",
          "--json",
          "--db",
          db};
}

TEST(TuneKeyList, KeysRecordedBySeveralProcessesAreTunedExactly) {
  TempDir dir;
  const auto file = dir / "misses.keys";
  // Three "serving" processes, each missing some keys; two keys are missed by all of them.
  const std::vector<std::vector<KeyLine>> missed{
      {{"gemm", "m=24,n=4096,k=4096", DType::kBF16, "nt"},
       {"rmsnorm", "rows=7,hidden=4095", DType::kF16, ""}},
      {{"gemm", "m=24,n=4096,k=4096", DType::kBF16, "nt"},
       {"softmax", "rows=4,cols=1000", DType::kF32, "causal"}},
      {{"rmsnorm", "rows=7,hidden=4095", DType::kF16, ""},
       {"rmsnorm", "rows=3,hidden=1024", DType::kBF16, "residual"}},
  };
  std::vector<pid_t> children;
  for (const auto& keys : missed) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      runtime::MissRecorder r(file);
      for (int again = 0; again < 2; ++again)  // a key missed twice in a process is written once
        for (const auto& k : keys) r.record(k);
      ::_exit(r.written() == keys.size() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t c : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(c, &status, 0), c);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const std::set<Key> want{{"gemm", "m=24,n=4096,k=4096", "bf16", "nt"},
                           {"rmsnorm", "rows=7,hidden=4095", "f16", ""},
                           {"softmax", "rows=4,cols=1000", "f32", "causal"},
                           {"rmsnorm", "rows=3,hidden=1024", "bf16", "residual"}};

  const std::string db = (dir / "recorded.db").string();
  const auto r = run_ktune(sweep(file.string(), db));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("keys").size(), want.size()) << "each recorded key once, repeats dropped";
  EXPECT_EQ(keys_in(db), want);

  // Two shards of the same file cover it.
  std::set<Key> covered;
  for (int i = 0; i < 2; ++i) {
    const std::string shard_db = (dir / ("shard" + std::to_string(i) + ".db")).string();
    auto args = sweep(file.string(), shard_db);
    args.insert(args.end(), {"--shard", std::to_string(i) + "/2"});
    const auto s = run_ktune(args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
    for (const Key& k : keys_in(shard_db))
      EXPECT_TRUE(covered.insert(k).second) << std::get<0>(k) << " twice";
  }
  EXPECT_EQ(covered, want);
}

// Every key that four decoders built from ktune's ops recorded on the H200
// (examples/python/decoder_layers.py --record: gemm with and without bias, rmsnorm, rope_append
// with paged caches, paged decode_attention, swiglu) is accepted: each key is tuned, none refused.
TEST(TuneKeyList, EveryKeyFourDecodersRecordedIsTuned) {
  const std::filesystem::path dir_of_lists =
      std::filesystem::path(KTUNE_SOURCE_DIR) / "examples/python/decoder-keys";
  int lists = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_of_lists)) {
    ++lists;
    std::set<Key> want;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream words(line);
      std::string kernel, shape, dtype, layout;
      words >> kernel >> shape >> dtype >> layout;
      want.insert({kernel, shape, dtype, layout});
    }
    TempDir dir;
    const std::string db = (dir / "keys.db").string();
    const auto r = run_ktune(sweep(entry.path().string(), db));
    ASSERT_EQ(r.exit_code, 0) << entry.path() << "\n" << r.err;
    EXPECT_EQ(keys_in(db), want) << entry.path();
    EXPECT_GE(want.size(), 30u) << entry.path();
  }
  EXPECT_EQ(lists, 4);
}

TEST(TuneKeyList, DtypeWithAKeyListExits2) {
  TempDir dir;
  const auto file = dir / "one.keys";
  runtime::MissRecorder(file).record({"rmsnorm", "rows=7,hidden=4095", DType::kF16, ""});
  auto args = sweep(file.string(), (dir / "x.db").string());
  args.insert(args.end(), {"--dtype", "bf16"});
  const auto r = run_ktune(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a key list"), std::string::npos) << r.err;
}

// A Triton kernel's keys (ktune.triton.autotune's misses, `triton:MODULE:FUNCTION`) name a Python
// module ktune cannot import: the file is refused before anything is tuned, naming the first such
// line and the command that tunes the whole file.
TEST(TuneKeyList, TritonKeysAreRefusedNamingThePythonCommand) {
  TempDir dir;
  const auto file = dir / "mixed.keys";
  std::ofstream(file) << "# one program's misses: ktune.torch's and ktune.triton's\n"
                      << "rmsnorm rows=7,hidden=4095 f16\n"
                      << "triton:rmsnorm:rmsnorm_rows rows=24,n_cols=3072 bf16\n"
                      << "triton:matmul:matmul_tiles m=16,n=4096,k=4096 bf16\n";
  const std::string db = (dir / "x.db").string();
  const auto r = run_ktune(sweep(file.string(), db));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("mixed.keys:3: 'triton:rmsnorm:rmsnorm_rows' is a Triton kernel"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("2 of the file's 3 key(s)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("`python3 -m ktune.triton tune " + file.string() + "`"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(std::filesystem::exists(db)) << "nothing tuned, no database written";
}

}  // namespace
}  // namespace ktune::testing
