#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "cache_test_util.hpp"
#include "core/json_depth.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

using testing::Rng;
using testing::TempDir;

/// Everything that identifies a stored measurement and its content, independent of row ids.
using RowKey = std::tuple<std::string, std::string, std::string, std::string, DType, std::string, std::string,
                          std::string, std::optional<double>, std::string, std::string, std::string,
                          std::string, double>;

std::multiset<RowKey> all_rows(const ConfigCache& db) {
  std::multiset<RowKey> rows;
  db.for_each_measurement({}, [&](const StoredMeasurement& s) {
    rows.emplace(s.gpu.name, s.kernel.name + "@" + s.kernel.source_hash, s.run_started_at, s.m.shape,
                 s.m.dtype, s.m.config_name, s.m.config_json, std::string(to_string(s.m.outcome)),
                 s.m.stats ? std::optional(s.m.stats->median_us) : std::nullopt, s.m.counters_json,
                 s.m.resources_json, s.measured_at, s.m.layout, s.m.fidelity);
  });
  return rows;
}

std::map<std::string, std::string> best_map(const ConfigCache& db) {
  std::map<std::string, std::string> out;
  for (const auto& b : db.list_best()) {
    out[b.gpu_name + "|" + b.kernel.name + "|" + b.kernel.source_hash + "|" + b.shape + "|" +
        to_string(b.dtype) + "|" + b.layout] = b.config_name;
  }
  return out;
}

/// Fills `db` with random GPUs, kernels, runs, measurements (some failed, random layouts and
/// fidelities) and best rows.
void fill(ConfigCache& db, Rng& r, int runs) {
  static const std::vector<std::string> kLayouts = {"", "nt", "nn", "nt+bias+silu"};
  const int64_t gpu = db.upsert_gpu(testing::random_gpu(r));
  for (int k = 0; k < 2; ++k) {
    const int64_t kernel = db.upsert_kernel(testing::random_kernel(r));
    for (int run = 0; run < runs; ++run) {
      const int64_t run_id = db.begin_run(testing::random_run(r));
      for (int s = 0; s < 4; ++s) {
        const std::string shape = testing::random_shape(r);
        std::vector<Measurement> ms;
        for (int i = 0; i < 6; ++i) ms.push_back(testing::random_measurement(r, shape, DType::kBF16));
        ms.push_back(testing::random_failure(r, shape, DType::kBF16));
        const std::string layout = kLayouts[static_cast<size_t>(r.uniform(0, 3))];
        for (Measurement& m : ms) {
          m.layout = layout;
          m.fidelity = r.coin() ? 1.0 : r.real(0.05, 0.95);
        }
        const auto ids = db.record(run_id, gpu, kernel, ms);
        db.set_best(ids[static_cast<size_t>(r.uniform(0, 5))]);
      }
    }
  }
}

TEST(ExportImport, RoundTripKeepsEveryRow) {
  Rng r;
  SCOPED_TRACE(r.seed());
  TempDir dir;
  ConfigCache a = ConfigCache::open(dir / "a.db");
  fill(a, r, 2);
  a.store_compiled({r.hex(32), "cubin", "", "{}", "{}", 3.0, "", ""});
  a.export_json(dir / "export.json");

  const auto doc = nlohmann::json::parse(testing::file_bytes(dir / "export.json"));
  EXPECT_EQ(doc.at("format"), "ktune-export");
  EXPECT_EQ(doc.at("format_version"), 1);
  EXPECT_EQ(doc.at("measurements").size(), 2u * 2 * 4 * 7);

  ConfigCache b = ConfigCache::open(dir / "b.db");
  const MergeStats st = b.import_json(dir / "export.json");
  EXPECT_EQ(st.measurements_added, 2 * 2 * 4 * 7);
  EXPECT_EQ(st.measurements_skipped, 0);
  EXPECT_EQ(st.best_updated, 2 * 2 * 4);
  EXPECT_EQ(all_rows(a), all_rows(b));
  EXPECT_EQ(best_map(a), best_map(b));
  EXPECT_EQ(a.runs().size(), b.runs().size());
  EXPECT_EQ(a.gpus()[0].ceilings_json, b.gpus()[0].ceilings_json);
  EXPECT_TRUE(b.verify().ok);

  // Importing again adds nothing.
  const MergeStats again = b.import_json(dir / "export.json");
  EXPECT_EQ(again.measurements_added, 0);
  EXPECT_EQ(again.measurements_skipped, 2 * 2 * 4 * 7);
  EXPECT_EQ(again.best_updated, 0);
  EXPECT_EQ(all_rows(a), all_rows(b));
}

TEST(ExportImport, RejectsForeignOrNewerFiles) {
  TempDir dir;
  ConfigCache db = ConfigCache::open(dir / "a.db");
  const auto write = [&](const std::string& text) {
    std::ofstream(dir / "in.json") << text;
    return dir / "in.json";
  };
  const auto expect_kind = [&](const std::filesystem::path& p, ErrorKind kind) {
    try {
      db.import_json(p);
      ADD_FAILURE() << p;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
    }
  };
  expect_kind(write("{ not json"), ErrorKind::kBadInput);
  expect_kind(write(R"({"format":"other","format_version":1})"), ErrorKind::kBadInput);
  expect_kind(write(R"({"format":"ktune-export","format_version":99})"), ErrorKind::kBadInput);
  expect_kind(write(R"({"format":"ktune-export","format_version":1,"gpus":[{"id":1}]})"),
              ErrorKind::kBadInput);
  expect_kind(dir / "missing.json", ErrorKind::kNotFound);
  EXPECT_TRUE(db.gpus().empty());  // nothing half-imported
}

TEST(ExportImport, RefusesADocumentNestedPastTheBoundAndStoresNothing) {
  // A real export whose first measurement's config is nested 10,000 (then 100,000) deep: before
  // the bound the import stored it and `cache verify` then failed; 100,000 crashed the server.
  Rng r;
  SCOPED_TRACE(r.seed());
  TempDir dir;
  ConfigCache a = ConfigCache::open(dir / "a.db");
  fill(a, r, 1);
  a.export_json(dir / "export.json");
  nlohmann::json doc = nlohmann::json::parse(testing::file_bytes(dir / "export.json"));
  ConfigCache b = ConfigCache::open(dir / "b.db");
  for (const int depth : {kMaxJsonDepth + 1, 10'000, 100'000}) {
    const std::string marker = "\"DEEP\"";
    doc["measurements"][0]["config"] = "DEEP";
    std::string text = doc.dump();
    text.replace(text.find(marker), marker.size(), std::string(depth, '[') + std::string(depth, ']'));
    std::ofstream(dir / "deep.json", std::ios::trunc) << text;
    try {
      b.import_json(dir / "deep.json");
      ADD_FAILURE() << "depth " << depth << " imported";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
      EXPECT_NE(std::string(e.what()).find("deeper than 64"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(b.gpus().empty()) << "nothing of a refused document is stored";
  }
  // The same document within the bound imports, and the database verifies.
  EXPECT_GT(b.import_json(dir / "export.json").measurements_added, 0);
  EXPECT_TRUE(b.verify().ok);
}

TEST(Merge, KeepsEveryRowAndChoosesLowerMedian) {
  Rng r;
  SCOPED_TRACE(r.seed());
  TempDir dir;
  ConfigCache a = ConfigCache::open(dir / "a.db");
  ConfigCache b = ConfigCache::open(dir / "b.db");
  fill(a, r, 1);
  fill(b, r, 2);
  // A key tuned in both databases, on the same GPU and kernel: the lower median must win.
  const GpuInfo gpu = testing::random_gpu(r);
  const KernelInfo kernel = testing::random_kernel(r);
  const std::string shape = testing::random_shape(r);
  Measurement slow = testing::random_measurement(r, shape, DType::kF16);
  Measurement fast = testing::random_measurement(r, shape, DType::kF16);
  slow.stats->median_us = fast.stats->median_us * r.real(1.1, 3.0);
  for (auto* side : {&a, &b}) {
    const auto ids = side->record(side->begin_run(testing::random_run(r)), side->upsert_gpu(gpu),
                                  side->upsert_kernel(kernel), {side == &a ? slow : fast});
    side->set_best(ids[0]);
  }

  std::multiset<RowKey> want = all_rows(a);
  for (const auto& row : all_rows(b)) want.insert(row);
  std::map<std::string, std::string> want_best = best_map(a);
  for (const auto& [k, v] : best_map(b)) want_best[k] = v;  // b holds the faster shared key
  const int64_t b_rows = static_cast<int64_t>(all_rows(b).size());

  const MergeStats st = a.merge(b.path());
  EXPECT_EQ(st.measurements_added, b_rows);
  EXPECT_EQ(st.measurements_skipped, 0);
  EXPECT_EQ(all_rows(a), want);
  EXPECT_EQ(best_map(a), want_best);
  const auto got = a.best({gpu.name, kernel.name, shape, DType::kF16, std::nullopt, ""}, false);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->config_name, fast.config_name);
  EXPECT_EQ(a.gpus().size(), 3u);  // two from fill(), the shared one once
  EXPECT_TRUE(a.verify().ok);

  // Merging the same database again changes nothing.
  const MergeStats again = a.merge(b.path());
  EXPECT_EQ(again.measurements_added, 0);
  EXPECT_EQ(again.measurements_skipped, b_rows);
  EXPECT_EQ(again.best_updated, 0);
  EXPECT_EQ(all_rows(a), want);

  // The slower side merged into the faster one keeps the faster winner.
  b.merge(dir / "a.db");
  EXPECT_EQ(b.best({gpu.name, kernel.name, shape, DType::kF16, std::nullopt, ""}, false)->config_name,
            fast.config_name);
}

TEST(Merge, RefusesItselfAndBadFiles) {
  TempDir dir;
  ConfigCache a = ConfigCache::open(dir / "a.db");
  try {
    a.merge(dir / "a.db");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
  }
  try {
    a.merge(dir / "missing.db");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
  }
}

}  // namespace
}  // namespace ktune::cache
