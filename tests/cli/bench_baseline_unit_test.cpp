// tuner/library/baseline_measurement without a GPU: which keys have a cuBLAS baseline, and the tuning loop's
// call record_cublas_baseline with a fake measurer on a real database: the row is stored as a
// baseline, never becomes the best, is left out of the loop's stored results, and a failure is a
// stored outcome (but a missing GPU ends the sweep).

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "ktune/error.hpp"
#include "tests/cli/test_db_fixture.hpp"
#include "tuner/library/baseline_measurement.hpp"
#include "tuner/loop/detail/stored_results.hpp"

namespace ktune::testing {
namespace {

namespace kt = kernel_templates;

kt::Problem gemm(int64_t m, int64_t n, int64_t k, ktune::DType dtype, std::string layout) {
  return {{{"m", m}, {"n", n}, {"k", k}}, dtype, std::move(layout)};
}

TEST(CublasBaseline, OnlyGemmInF16Bf16F32PlainOrBiased) {
  for (DType d : {DType::kF16, DType::kBF16, DType::kF32}) {
    for (const char* layout : {"nt", "nn", "", "nt+bias", "nn+bias"}) {
      EXPECT_FALSE(tuner::no_cublas_baseline("gemm", gemm(16, 4096, 4096, d, layout)).has_value())
          << ktune::to_string(d) << " " << layout;
    }
  }
  const auto fp8 = tuner::no_cublas_baseline("gemm", gemm(16, 64, 64, DType::kFP8E4M3, "nt"));
  ASSERT_TRUE(fp8.has_value());
  EXPECT_NE(fp8->find("fp8e4m3"), std::string::npos) << *fp8;
  // cuBLASLt has a bias epilogue but no SiLU.
  for (const char* layout : {"nt+silu", "nn+bias+silu"}) {
    const auto epilogue = tuner::no_cublas_baseline("gemm", gemm(16, 64, 64, DType::kBF16, layout));
    ASSERT_TRUE(epilogue.has_value()) << layout;
    EXPECT_NE(epilogue->find(layout), std::string::npos) << *epilogue;
  }
  const kt::Problem rms{{{"rows", 16}, {"hidden", 4096}}, DType::kBF16, ""};
  EXPECT_EQ(tuner::no_cublas_baseline("rmsnorm", rms).value_or(""), "no cuBLAS baseline for kernel rmsnorm");
  EXPECT_EQ(tuner::cublas_baseline_name(gemm(1, 2, 3, DType::kF16, "nn")), "cublas.f16.nn");
  EXPECT_EQ(tuner::cublas_baseline_name(gemm(1, 2, 3, DType::kBF16, "")), "cublas.bf16.nt");
}

/// Answers with a timed result whose median is drawn at random, or throws what it is told to.
class FakeMeasurer final : public tuner::BaselineMeasurer {
 public:
  explicit FakeMeasurer(uint32_t seed) : rng_(seed) {}
  measure::CandidateResult measure_cublas(const kt::Problem& problem, const measure::TimingOptions& timing,
                                          bool verify) override {
    ++calls;
    last_verify = verify;
    last_seed = timing.seed;
    if (throw_kind) throw Error(*throw_kind, "fake failure");
    measure::CandidateResult r;
    r.name = tuner::cublas_baseline_name(problem);
    r.outcome = ktune::Outcome::kOk;
    measure::SampleStats s;
    s.median = std::uniform_real_distribution<double>(3, 300)(rng_);
    s.min = s.median * 0.97;
    s.mean = s.median * 1.01;
    s.p90 = s.median * 1.04;
    s.stdev = s.median * 0.02;
    s.samples = 37;
    r.stats = s;
    r.resources = {{"library", "cuBLASLt 130100"}, {"algorithm", "algo 66 tile 23"}};
    r.sm_clock_mhz = 1980;
    median = s.median;
    return r;
  }
  int calls = 0;
  bool last_verify = false;
  uint64_t last_seed = 0;
  double median = 0;
  std::optional<ErrorKind> throw_kind;

 private:
  std::mt19937 rng_;
};

class RecordBaseline : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.emplace(cache::ConfigCache::open(tmp_ / "b.db"));
    gpu_ = db_->upsert_gpu({"Test GPU Bench", 9, 0, 132, int64_t{140} << 30, "{}"});
    kernel_ = db_->upsert_kernel({"gemm", "hash-1"});
    run_ = db_->begin_run({});
  }
  TempDir tmp_;
  std::optional<cache::ConfigCache> db_;
  int64_t gpu_ = 0, kernel_ = 0, run_ = 0;
};

TEST_F(RecordBaseline, StoresACublasRowThatIsNeverTheBest) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  FakeMeasurer fake(seed);
  measure::TimingOptions timing;
  timing.seed = seed;
  const kt::Problem p = gemm(16, 4096, 4096, ktune::DType::kBF16, "nt");
  const auto recorded = tuner::record_cublas_baseline(*db_, run_, gpu_, kernel_, "gemm", p, timing, fake);
  ASSERT_TRUE(recorded.has_value());
  const std::optional<int64_t> id = recorded->measurement_id;
  ASSERT_TRUE(recorded->measurement.stats.has_value());
  EXPECT_DOUBLE_EQ(recorded->measurement.stats->median_us, fake.median);
  EXPECT_EQ(recorded->measurement.baseline, "cublas");
  EXPECT_EQ(fake.calls, 1);
  EXPECT_TRUE(fake.last_verify) << "a stored baseline is always verified";
  EXPECT_EQ(fake.last_seed, seed) << "the loop's timing options reach the measurer";

  int rows = 0;
  db_->for_each_measurement({}, [&](const cache::StoredMeasurement& s) {
    ++rows;
    EXPECT_EQ(s.id, *id);
    EXPECT_EQ(s.m.baseline, "cublas");
    EXPECT_EQ(s.m.config_name, "cublas.bf16.nt");
    EXPECT_EQ(s.m.shape, "m=16,n=4096,k=4096");
    EXPECT_EQ(s.m.dtype, DType::kBF16);
    EXPECT_EQ(s.m.layout, "nt");
    EXPECT_EQ(s.m.outcome, ktune::Outcome::kOk);
    ASSERT_TRUE(s.m.stats.has_value());
    EXPECT_DOUBLE_EQ(s.m.stats->median_us, fake.median);
    EXPECT_EQ(s.m.stats->samples, 37);
    EXPECT_EQ(nlohmann::json::parse(s.m.config_json).at("algorithm"), "algo 66 tile 23");
    EXPECT_EQ(s.m.sm_clock_mhz.value_or(0), 1980);
  });
  EXPECT_EQ(rows, 1);
  EXPECT_FALSE(
      db_->best({"Test GPU Bench", "gemm", "m=16,n=4096,k=4096", DType::kBF16, std::nullopt, "nt"}, false))
      << "a baseline is never named the best";
  EXPECT_TRUE(
      tuner::detail::load_stored_results(*db_, gpu_, kernel_, "m=16,n=4096,k=4096", DType::kBF16, "nt")
          .empty())
      << "the loop's resume must not treat the baseline as a candidate";
  EXPECT_EQ(db_->results_for(gpu_, kernel_, "m=16,n=4096,k=4096", DType::kBF16, "nt").size(), 1u);
}

TEST_F(RecordBaseline, KeysWithoutABaselineMeasureNothing) {
  FakeMeasurer fake(1);
  const kt::Problem rms{{{"rows", 16}, {"hidden", 4096}}, ktune::DType::kBF16, ""};
  EXPECT_FALSE(tuner::record_cublas_baseline(*db_, run_, gpu_, kernel_, "rmsnorm", rms, {}, fake));
  EXPECT_FALSE(tuner::record_cublas_baseline(*db_, run_, gpu_, kernel_, "gemm",
                                             gemm(16, 64, 64, ktune::DType::kBF16, "nn+silu"), {}, fake));
  EXPECT_EQ(fake.calls, 0);
  int rows = 0;
  db_->for_each_measurement({}, [&](const cache::StoredMeasurement&) { ++rows; });
  EXPECT_EQ(rows, 0);
}

TEST_F(RecordBaseline, AFailureIsStoredButNoDeviceEndsTheSweep) {
  FakeMeasurer fake(2);
  fake.throw_kind = ErrorKind::kRuntime;
  const kt::Problem p = gemm(512, 1024, 2048, ktune::DType::kF16, "nn");
  const auto recorded = tuner::record_cublas_baseline(*db_, run_, gpu_, kernel_, "gemm", p, {}, fake);
  ASSERT_TRUE(recorded.has_value());
  EXPECT_EQ(recorded->measurement.outcome, ktune::Outcome::kLaunchError);
  db_->for_each_measurement({}, [&](const cache::StoredMeasurement& s) {
    EXPECT_EQ(s.m.outcome, ktune::Outcome::kLaunchError);
    EXPECT_NE(s.m.reason.find("fake failure"), std::string::npos) << s.m.reason;
    EXPECT_EQ(s.m.baseline, "cublas");
    EXPECT_FALSE(s.m.stats.has_value());
  });
  fake.throw_kind = ErrorKind::kNoDevice;
  try {
    tuner::record_cublas_baseline(*db_, run_, gpu_, kernel_, "gemm", p, {}, fake);
    ADD_FAILURE() << "no device must end the sweep";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNoDevice);
  }
}

}  // namespace
}  // namespace ktune::testing
