#include <gtest/gtest.h>

#include <map>

#include "cache/best_index.hpp"
#include "cache_test_util.hpp"

namespace ktune::cache {
namespace {

using testing::Rng;
using testing::TempDir;

TEST(BestIndex, MatchesSqliteLookupsForEveryKey) {
  Rng r;
  SCOPED_TRACE(r.seed());
  TempDir dir;
  ConfigCache db = ConfigCache::open(dir / "a.db");
  const GpuInfo gpu = testing::random_gpu(r);
  const GpuInfo other_gpu = testing::random_gpu(r);
  const int64_t g = db.upsert_gpu(gpu);
  const int64_t og = db.upsert_gpu(other_gpu);
  const int64_t run = db.begin_run(testing::random_run(r));
  std::vector<KernelInfo> kernels;
  std::vector<std::tuple<std::string, std::string, DType, std::string>> keys;
  const std::vector<std::string> layouts = {"", "nt", "nn", "nt+bias+silu"};
  for (int k = 0; k < 3; ++k) {
    kernels.push_back(testing::random_kernel(r));
    const int64_t kid = db.upsert_kernel(kernels.back());
    for (int s = 0; s < 15; ++s) {
      const std::string shape = testing::random_shape(r);
      const DType dtype = r.coin() ? DType::kBF16 : DType::kF16;
      const std::string layout = layouts[static_cast<size_t>(r.uniform(0, 3))];
      std::vector<Measurement> ms = {testing::random_measurement(r, shape, dtype),
                                     testing::random_measurement(r, shape, dtype)};
      for (Measurement& m : ms) m.layout = layout;
      const auto ids = db.record(run, r.uniform(0, 3) ? g : og, kid, ms);
      db.set_best(ids[static_cast<size_t>(r.uniform(0, 1))]);
      keys.emplace_back(kernels.back().name, shape, dtype, layout);
    }
  }
  // An older hash of kernel 0 with its own best row: the index must ignore it.
  const std::string stale_hash = r.hex(16);
  const int64_t stale = db.upsert_kernel({kernels[0].name, stale_hash});
  const std::string stale_shape = testing::random_shape(r);
  db.set_best(db.record(run, g, stale, {testing::random_measurement(r, stale_shape, DType::kBF16)})[0]);
  db.upsert_kernel(kernels[0]);  // re-registered: kernel 0's original hash is the current one again

  const BestIndex idx = BestIndex::load(db, gpu.name);
  size_t found = 0;
  for (const auto& [kernel, shape, dtype, layout] : keys) {
    const auto want = db.best({gpu.name, kernel, shape, dtype, std::nullopt, layout}, false);
    const BestConfig* got = idx.find(kernel, shape, dtype, layout);
    ASSERT_EQ(got != nullptr, want.has_value()) << kernel << " " << shape;
    if (!got) continue;
    ++found;
    EXPECT_EQ(got->config_name, want->config_name);
    EXPECT_EQ(got->measurement_id, want->measurement_id);
    EXPECT_EQ(got->stats.median_us, want->stats.median_us);
    EXPECT_EQ(got->layout, layout);
    EXPECT_EQ(idx.find(kernel, shape, dtype, layout + "x"), nullptr);
  }
  EXPECT_EQ(idx.size(), found);
  EXPECT_GT(found, 0u);
  EXPECT_EQ(idx.find(kernels[0].name, stale_shape, DType::kBF16, ""), nullptr);
  EXPECT_EQ(idx.find(kernels[0].name + "x", std::get<1>(keys[0]), std::get<2>(keys[0]), std::get<3>(keys[0])),
            nullptr);

  // With the stale hash named explicitly, its row is the one served.
  const BestIndex old = BestIndex::load(db, gpu.name, {{kernels[0].name, stale_hash}});
  const BestConfig* stale_best = old.find(kernels[0].name, stale_shape, DType::kBF16, "");
  ASSERT_NE(stale_best, nullptr);
  EXPECT_EQ(stale_best->kernel.source_hash, stale_hash);
  EXPECT_EQ(old.find(std::get<0>(keys[0]), std::get<1>(keys[0]), std::get<2>(keys[0]), std::get<3>(keys[0])),
            nullptr);

  // Fallback agrees with ConfigCache::best's.
  for (int q = 0; q < 20; ++q) {
    const auto& k = kernels[static_cast<size_t>(r.uniform(0, 2))];
    const DType dtype = r.coin() ? DType::kBF16 : DType::kF16;
    const std::string layout = layouts[static_cast<size_t>(r.uniform(0, 3))];
    const Shape asked = Shape::parse(testing::random_shape(r));
    const auto want = db.best({gpu.name, k.name, asked.canonical(), dtype, std::nullopt, layout}, true);
    const auto got = idx.find_or_nearest(k.name, asked, dtype, layout);
    ASSERT_EQ(got.has_value(), want.has_value());
    if (!got) continue;
    EXPECT_EQ(got->tuned_shape, want->tuned_shape);
    EXPECT_EQ(got->fallback, want->fallback);
    EXPECT_EQ(got->shape, asked.canonical());
    EXPECT_EQ(got->layout, layout);
    EXPECT_EQ(got->config_name, want->config_name);
  }
}

}  // namespace
}  // namespace ktune::cache
