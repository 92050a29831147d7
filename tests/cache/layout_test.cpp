// The layout part of the key: separate winners per layout, fallback within a layout, filters, the
// BestIndex, and the duplicate rule of import/merge with layout and fidelity.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "cache/best_index.hpp"
#include "cache/config_cache.hpp"
#include "cache_test_util.hpp"
#include "core/shape.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace layout_test {  // named: the unity build batches this file with others

using testing::Rng;
using testing::TempDir;

struct Fixture {
  Rng r;
  TempDir dir;
  ConfigCache db = ConfigCache::open(dir / "ktune.db");
  GpuInfo gpu = testing::random_gpu(r);
  KernelInfo kernel = testing::random_kernel(r);
  int64_t gpu_id = db.upsert_gpu(gpu);
  int64_t kernel_id = db.upsert_kernel(kernel);
  int64_t run_id = db.begin_run(testing::random_run(r));

  /// Records `n` random ok measurements of (shape, dtype, layout) and names the fastest the winner;
  /// returns the winner's config name.
  std::string tune(const std::string& shape, DType dtype, const std::string& layout, int n) {
    std::vector<Measurement> ms;
    for (int i = 0; i < n; ++i) {
      ms.push_back(testing::random_measurement(r, shape, dtype));
      ms.back().layout = layout;
    }
    const auto ids = db.record(run_id, gpu_id, kernel_id, ms);
    size_t win = 0;
    for (size_t i = 1; i < ms.size(); ++i) {
      if (ms[i].stats->median_us < ms[win].stats->median_us) win = i;
    }
    db.set_best(ids[win]);
    return ms[win].config_name;
  }
  Lookup lookup(const std::string& shape, DType dtype, const std::string& layout) const {
    return Lookup{gpu.name, kernel.name, shape, dtype, std::nullopt, layout};
  }
};

TEST(Layout, TwoLayoutsOfOneShapeKeepSeparateWinners) {
  Fixture f;
  SCOPED_TRACE(f.r.seed());
  const std::string shape = testing::random_shape(f.r);
  const std::string nt = f.tune(shape, DType::kBF16, "nt", static_cast<int>(f.r.uniform(3, 12)));
  const std::string nn = f.tune(shape, DType::kBF16, "nn", static_cast<int>(f.r.uniform(3, 12)));
  ASSERT_NE(nt, nn);

  const auto got_nt = f.db.best(f.lookup(shape, DType::kBF16, "nt"), false);
  const auto got_nn = f.db.best(f.lookup(shape, DType::kBF16, "nn"), false);
  ASSERT_TRUE(got_nt && got_nn);
  EXPECT_EQ(got_nt->config_name, nt);
  EXPECT_EQ(got_nt->layout, "nt");
  EXPECT_EQ(got_nn->config_name, nn);
  EXPECT_EQ(got_nn->layout, "nn");
  EXPECT_EQ(nlohmann::json::parse(got_nn->to_json()).at("layout"), "nn");
  // Neither answers a layout that was never tuned, nor "" (with or without fallback).
  EXPECT_FALSE(f.db.best(f.lookup(shape, DType::kBF16, ""), true));
  EXPECT_FALSE(f.db.best(f.lookup(shape, DType::kBF16, "nt+bias"), true));

  // Naming a winner of one layout leaves the other's alone.
  const std::string nt2 = f.tune(shape, DType::kBF16, "nt", 1);
  EXPECT_EQ(f.db.best(f.lookup(shape, DType::kBF16, "nt"), false)->config_name, nt2);
  EXPECT_EQ(f.db.best(f.lookup(shape, DType::kBF16, "nn"), false)->config_name, nn);

  const auto all = f.db.list_best();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].layout, "nn");  // ordered by layout within (GPU, kernel, hash, dtype)
  EXPECT_EQ(all[1].layout, "nt");
  Filter only_nn;
  only_nn.layout = "nn";
  ASSERT_EQ(f.db.list_best(only_nn).size(), 1u);
  EXPECT_EQ(f.db.list_best(only_nn)[0].config_name, nn);
  Filter none;
  none.layout = "";
  EXPECT_TRUE(f.db.list_best(none).empty());
  int nn_rows = 0;
  f.db.for_each_measurement(only_nn, [&](const StoredMeasurement& s) {
    EXPECT_EQ(s.m.layout, "nn");
    ++nn_rows;
  });
  EXPECT_GE(nn_rows, 3);

  EXPECT_TRUE(f.db.has_measurement(f.gpu_id, f.kernel_id, shape, DType::kBF16, "nn", nn));
  EXPECT_FALSE(f.db.has_measurement(f.gpu_id, f.kernel_id, shape, DType::kBF16, "nt", nn));
  EXPECT_FALSE(f.db.has_measurement(f.gpu_id, f.kernel_id, shape, DType::kBF16, nn));  // layout ""

  const BestIndex idx = BestIndex::load(f.db, f.gpu.name);
  EXPECT_EQ(idx.size(), 2u);
  ASSERT_NE(idx.find(f.kernel.name, shape, DType::kBF16, "nt"), nullptr);
  EXPECT_EQ(idx.find(f.kernel.name, shape, DType::kBF16, "nt")->config_name, nt2);
  ASSERT_NE(idx.find(f.kernel.name, shape, DType::kBF16, "nn"), nullptr);
  EXPECT_EQ(idx.find(f.kernel.name, shape, DType::kBF16, "nn")->config_name, nn);
  EXPECT_EQ(idx.find(f.kernel.name, shape, DType::kBF16, ""), nullptr);
  EXPECT_TRUE(f.db.verify().ok);
}

TEST(Layout, FallbackStaysWithinTheLayout) {
  Fixture f;
  SCOPED_TRACE(f.r.seed());
  // Many "nt" shapes; a single "nn" shape: every "nn" fallback must land on that one.
  std::vector<std::string> nt_shapes;
  for (int i = 0; i < 10; ++i) {
    nt_shapes.push_back(testing::random_shape(f.r));
    f.tune(nt_shapes.back(), DType::kF16, "nt", 2);
  }
  const std::string nn_shape = testing::random_shape(f.r);
  const std::string nn_winner = f.tune(nn_shape, DType::kF16, "nn", 3);
  const BestIndex idx = BestIndex::load(f.db, f.gpu.name);

  for (int q = 0; q < 20; ++q) {
    const std::string asked = q == 0 ? nt_shapes[0] : testing::random_shape(f.r);
    if (asked == nn_shape) continue;
    const auto got = f.db.best(f.lookup(asked, DType::kF16, "nn"), true);
    ASSERT_TRUE(got) << asked;
    EXPECT_TRUE(got->fallback);
    EXPECT_EQ(got->tuned_shape, nn_shape);
    EXPECT_EQ(got->config_name, nn_winner);
    EXPECT_EQ(got->layout, "nn");
    const auto from_index = idx.find_or_nearest(f.kernel.name, Shape::parse(asked), DType::kF16, "nn");
    ASSERT_TRUE(from_index);
    EXPECT_EQ(from_index->tuned_shape, nn_shape);
    EXPECT_EQ(from_index->layout, "nn");

    // The "nt" fallback never names the "nn" shape, which may be the nearest of all.
    const auto nt = f.db.best(f.lookup(asked, DType::kF16, "nt"), true);
    ASSERT_TRUE(nt);
    EXPECT_NE(nt->tuned_shape, nn_shape);
    EXPECT_EQ(nt->layout, "nt");
    const auto nt_index = idx.find_or_nearest(f.kernel.name, Shape::parse(asked), DType::kF16, "nt");
    ASSERT_TRUE(nt_index);
    EXPECT_EQ(nt_index->tuned_shape, nt->tuned_shape);
  }
  EXPECT_FALSE(f.db.best(f.lookup(nn_shape, DType::kF16, "tn"), true));
  EXPECT_FALSE(idx.find_or_nearest(f.kernel.name, Shape::parse(nn_shape), DType::kF16, "tn"));
}

/// An export document with one GPU, kernel and run and the given measurements.
nlohmann::json export_doc(const std::vector<nlohmann::json>& measurements) {
  return {{"format", "ktune-export"},
          {"format_version", 1},
          {"gpus",
           {{{"id", 3},
             {"name", "NVIDIA T"},
             {"cc_major", 9},
             {"cc_minor", 0},
             {"sm_count", 132},
             {"memory_bytes", int64_t{141} << 30}}}},
          {"kernels", {{{"id", 5}, {"name", "gemm"}, {"source_hash", "ab12"}}}},
          {"runs", {{{"id", 7}, {"started_at", "2025-02-01T10:00:00.000Z"}, {"host", "h"}}}},
          {"measurements", nlohmann::json(measurements)},
          {"best", nlohmann::json::array()}};
}

nlohmann::json export_row(int64_t id, const std::string& layout, std::optional<double> fidelity,
                          double median, const std::string& measured_at) {
  nlohmann::json j = {{"id", id},
                      {"run_id", 7},
                      {"gpu_id", 3},
                      {"kernel_id", 5},
                      {"shape", "m=16,n=4096,k=4096"},
                      {"dtype", "bf16"},
                      {"config_name", "gemm.bf16.x"},
                      {"outcome", "ok"},
                      {"stats",
                       {{"median_us", median},
                        {"min_us", median},
                        {"mean_us", median},
                        {"p90_us", median},
                        {"stdev_us", 0.5},
                        {"samples", 40}}},
                      {"measured_at", measured_at}};
  if (!layout.empty()) j["layout"] = layout;
  if (fidelity) j["fidelity"] = *fidelity;
  return j;
}

TEST(Layout, ImportDuplicateRuleIncludesLayoutAndFidelity) {
  Rng r;
  SCOPED_TRACE(r.seed());
  TempDir dir;
  const std::string at = "2025-02-01T10:00:01.000Z";
  const double lo = r.real(0.05, 0.5);
  ConfigCache db = ConfigCache::open(dir / "a.db");
  // A row without the two fields (an export from before they existed) reads as layout "" at
  // fidelity 1.
  std::ofstream(dir / "first.json")
      << export_doc({export_row(1, "", std::nullopt, r.real(5, 50), at)}).dump();
  EXPECT_EQ(db.import_json(dir / "first.json").measurements_added, 1);
  // Rows identical to it but for layout or fidelity are different measurements; the same row with
  // the fields spelled out is a duplicate.
  const nlohmann::json rows = {
      export_row(1, "", 1.0, r.real(5, 50), at), export_row(2, "nt", 1.0, r.real(5, 50), at),
      export_row(3, "nn", 1.0, r.real(5, 50), at), export_row(4, "", lo, r.real(5, 50), at)};
  std::ofstream(dir / "second.json") << export_doc(rows).dump();
  const MergeStats st = db.import_json(dir / "second.json");
  EXPECT_EQ(st.measurements_added, 3);
  EXPECT_EQ(st.measurements_skipped, 1);
  std::map<std::pair<std::string, double>, int> seen;
  db.for_each_measurement({}, [&](const StoredMeasurement& s) { ++seen[{s.m.layout, s.m.fidelity}]; });
  const std::map<std::pair<std::string, double>, int> want = {
      {{"", 1.0}, 1}, {{"nt", 1.0}, 1}, {{"nn", 1.0}, 1}, {{"", lo}, 1}};
  EXPECT_EQ(seen, want);

  // A fidelity that is not > 0 is bad input, and nothing is imported.
  std::ofstream(dir / "bad.json") << export_doc({export_row(1, "nt", 0.0, 10, at)}).dump();
  ConfigCache b = ConfigCache::open(dir / "b.db");
  try {
    b.import_json(dir / "bad.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
  }
  EXPECT_TRUE(b.gpus().empty());
}

TEST(Layout, ImportRefusesABestRowOfAnotherLayout) {
  TempDir dir;
  nlohmann::json doc = export_doc({export_row(1, "nt", 1.0, 12.5, "2025-02-01T10:00:01.000Z")});
  doc["best"] = nlohmann::json::array({nlohmann::json{{"gpu_id", 3},
                                                      {"kernel_id", 5},
                                                      {"shape", "m=16,n=4096,k=4096"},
                                                      {"dtype", "bf16"},
                                                      {"layout", "nn"},
                                                      {"measurement_id", 1}}});
  std::ofstream(dir / "in.json") << doc.dump();
  ConfigCache db = ConfigCache::open(dir / "a.db");
  try {
    db.import_json(dir / "in.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
  }
  doc["best"][0]["layout"] = "nt";
  std::ofstream(dir / "in.json") << doc.dump();
  EXPECT_EQ(db.import_json(dir / "in.json").best_updated, 1);
  const Lookup l{"NVIDIA T", "gemm", "m=16,n=4096,k=4096", DType::kBF16, std::nullopt, "nt"};
  ASSERT_TRUE(db.best(l, false));
  EXPECT_EQ(db.best(l, false)->stats.median_us, 12.5);
}

}  // namespace layout_test
}  // namespace ktune::cache
