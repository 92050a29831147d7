// The C ABI from C++: the per-thread last error, concurrent lookups with a handle per thread,
// and files that are not databases. (capi_test.c proves the ABI from C.)

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "ktune/ktune.h"
#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace {

class CapiTest : public ::testing::Test {
 protected:
  void SetUp() override { db_ = make_test_db(tmp_ / "capi.db", std::random_device{}()); }
  TempDir tmp_;
  TestDb db_;
};

TEST_F(CapiTest, LastErrorIsPerThread) {
  ktune_db* db = nullptr;
  ASSERT_EQ(ktune_open(db_.path.c_str(), &db), KTUNE_OK) << ktune_last_error();
  char* json = nullptr;
  ASSERT_EQ(ktune_lookup(db, "Test GPU Alpha", "gemm", "m=-7,n=1,k=1", "bf16", "nt", 1, &json),
            KTUNE_ERR_BAD_INPUT);
  const std::string mine = ktune_last_error();
  EXPECT_NE(mine.find("'m=-7'"), std::string::npos) << mine;

  std::string other_before, other_after;
  std::thread t([&] {
    other_before = ktune_last_error();
    ktune_db* own = nullptr;
    EXPECT_EQ(ktune_open((tmp_ / "none.db").c_str(), &own), KTUNE_ERR_NOT_FOUND);
    other_after = ktune_last_error();
  });
  t.join();
  EXPECT_EQ(other_before, "") << "a new thread starts with no error";
  EXPECT_NE(other_after.find("no database at"), std::string::npos) << other_after;
  EXPECT_EQ(std::string(ktune_last_error()), mine)
      << "another thread's failure must not change this thread's";
  ktune_close(db);
}

TEST_F(CapiTest, ConcurrentLookupsWithAHandlePerThread) {
  constexpr int kThreads = 4;  // more than the 2 cores of CI, so the threads interleave
  constexpr int kLookups = 200;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ktune_db* db = nullptr;
      if (ktune_open(db_.path.c_str(), &db) != KTUNE_OK) {
        ++wrong;
        return;
      }
      std::mt19937 gen(static_cast<uint32_t>(t) + db_.seed);
      for (int i = 0; i < kLookups; ++i) {
        const auto& want = db_.best[gen() % db_.best.size()];
        char* json = nullptr;
        const int rc = ktune_lookup(db, want.gpu.c_str(), want.kernel.c_str(), want.shape.c_str(),
                                    want.dtype.c_str(), want.layout.c_str(), 0, &json);
        if (rc != KTUNE_OK || nlohmann::json::parse(json).at("config_name") != want.config_name) ++wrong;
        ktune_free_string(json);
      }
      ktune_close(db);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(CapiTest, LayoutsAnswerSeparatelyAndNullMeansTheKernelsDefault) {
  SCOPED_TRACE("seed " + std::to_string(db_.seed));
  const std::string gpu = "Test GPU Alpha";
  const std::string shape = "m=16,n=4096,k=4096";
  const auto& nt = db_.find(gpu, "gemm", shape, "bf16", "nt");
  const auto& nn = db_.find(gpu, "gemm", shape, "bf16", "nn");
  ASSERT_NE(nt.config_name, nn.config_name);
  ktune_db* db = nullptr;
  ASSERT_EQ(ktune_open(db_.path.c_str(), &db), KTUNE_OK) << ktune_last_error();
  auto winner = [&](const char* layout) -> std::string {
    char* json = nullptr;
    const int rc = ktune_lookup(db, gpu.c_str(), "gemm", shape.c_str(), "bf16", layout, 0, &json);
    EXPECT_EQ(rc, KTUNE_OK) << ktune_last_error();
    if (rc != KTUNE_OK) return {};
    const auto j = nlohmann::json::parse(json);
    ktune_free_string(json);
    EXPECT_EQ(j.at("layout"), layout != nullptr ? layout : "nt");
    return j.at("config_name").get<std::string>();
  };
  EXPECT_EQ(winner("nn"), nn.config_name);
  EXPECT_EQ(winner("nt"), nt.config_name);
  EXPECT_EQ(winner(nullptr), nt.config_name) << "NULL is gemm's default layout, nt";

  char* json = nullptr;
  EXPECT_EQ(ktune_lookup(db, gpu.c_str(), "gemm", shape.c_str(), "bf16", "tn", 1, &json),
            KTUNE_ERR_BAD_INPUT);
  EXPECT_NE(std::string(ktune_last_error()).find("'tn'"), std::string::npos) << ktune_last_error();
  EXPECT_EQ(ktune_lookup(db, gpu.c_str(), "gemm", shape.c_str(), "bf16", "nt+bias", 1, &json),
            KTUNE_ERR_NOT_FOUND)
      << "an accepted layout never tuned: fallback keeps the layout";
  // rmsnorm rows are stored without a layout: NULL and "" find them, another mode does not.
  const auto& rms = db_.find(gpu, "rmsnorm", "rows=16,hidden=4096", "f16");
  for (const char* layout : {static_cast<const char*>(nullptr), ""}) {
    ASSERT_EQ(ktune_lookup(db, gpu.c_str(), "rmsnorm", "rows=16,hidden=4096", "f16", layout, 0, &json),
              KTUNE_OK)
        << ktune_last_error();
    EXPECT_EQ(nlohmann::json::parse(json).at("config_name"), rms.config_name);
    ktune_free_string(json);
  }
  EXPECT_EQ(ktune_lookup(db, gpu.c_str(), "rmsnorm", "rows=16,hidden=4096", "f16", "residual", 1, &json),
            KTUNE_ERR_NOT_FOUND);
  ktune_close(db);
}

TEST_F(CapiTest, NullGpuMeansTheDatabasesOnlyGpu) {
  const auto single = tmp_ / "single.db";
  std::mt19937 gen(db_.seed);
  const std::string config = "gemm.bf16.solo" + std::to_string(gen() % 1000);
  {
    auto cache = cache::ConfigCache::open(single);
    const auto gpu = cache.upsert_gpu({"Solo GPU", 8, 9, 76, int64_t{24} << 30, "{}"});
    const auto kernel = cache.upsert_kernel({"gemm", "abcdef0123456789"});
    const auto run = cache.begin_run({});
    cache::Measurement m;
    m.shape = "m=32,n=2048,k=2048";
    m.dtype = DType::kBF16;
    m.layout = "nt";
    m.config_name = config;
    const double med = 1.0 + static_cast<double>(gen() % 1000);
    m.stats = cache::Stats{med, med, med, med, 0.1, 10};
    cache.set_best(cache.record(run, gpu, kernel, {m}).front());
  }
  ktune_db* db = nullptr;
  ASSERT_EQ(ktune_open(single.c_str(), &db), KTUNE_OK) << ktune_last_error();
  char* json = nullptr;
  ASSERT_EQ(ktune_lookup(db, nullptr, "gemm", "n=2048,k=2048,m=32", "bf16", nullptr, 0, &json), KTUNE_OK)
      << ktune_last_error();
  const auto j = nlohmann::json::parse(json);
  EXPECT_EQ(j.at("gpu"), "Solo GPU");
  EXPECT_EQ(j.at("config_name"), config);
  ktune_free_string(json);
  ktune_close(db);

  // The two-GPU fixture: NULL is ambiguous, and the error names the GPUs to choose from.
  ASSERT_EQ(ktune_open(db_.path.c_str(), &db), KTUNE_OK);
  EXPECT_EQ(ktune_lookup(db, nullptr, "gemm", "m=64,n=1024,k=1024", "bf16", "nt", 1, &json),
            KTUNE_ERR_BAD_INPUT);
  EXPECT_NE(std::string(ktune_last_error()).find("Test GPU Beta"), std::string::npos) << ktune_last_error();
  EXPECT_EQ(json, nullptr);
  ktune_close(db);
}

TEST_F(CapiTest, FilesThatAreNotDatabasesAreBadInput) {
  std::mt19937 gen(db_.seed);
  const auto text = tmp_ / "text.db";
  std::ofstream(text) << "not a database " << gen() << std::string(3000, 'z');
  ktune_db* db = reinterpret_cast<ktune_db*>(&gen);
  EXPECT_EQ(ktune_open(text.c_str(), &db), KTUNE_ERR_BAD_INPUT);
  EXPECT_EQ(db, nullptr);
  EXPECT_GT(std::string(ktune_last_error()).size(), 0u);

  // A database cut in half.
  const auto truncated = tmp_ / "truncated.db";
  std::filesystem::copy_file(db_.path, truncated);
  std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) / 2);
  const int rc = ktune_open(truncated.c_str(), &db);
  if (rc == KTUNE_OK) {
    // SQLite may open a truncated file lazily; the failure must then surface as a code on use.
    char* json = nullptr;
    const auto& want = db_.best.front();
    const int lrc = ktune_lookup(db, want.gpu.c_str(), want.kernel.c_str(), want.shape.c_str(),
                                 want.dtype.c_str(), want.layout.c_str(), 1, &json);
    EXPECT_TRUE(lrc == KTUNE_ERR_BAD_INPUT || lrc == KTUNE_ERR_RUNTIME || lrc == KTUNE_ERR_NOT_FOUND)
        << "lookup on a truncated database returned " << lrc;
    ktune_free_string(json);
    ktune_close(db);
  } else {
    EXPECT_EQ(rc, KTUNE_ERR_BAD_INPUT) << ktune_last_error();
  }
}

TEST(CapiVersion, MatchesTheProject) { EXPECT_STREQ(ktune_version(), KTUNE_EXPECTED_VERSION); }

}  // namespace
}  // namespace ktune::testing
