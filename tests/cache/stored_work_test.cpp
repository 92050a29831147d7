// measurements.work_flops and .work_bytes (schema version 4): the work of one launch stored with
// every measurement, read back, exported, imported and merged; a version-3 database (built with the
// version-3 schema, rows written without the columns) migrates with each old row's work taken from
// its resources (user kernels) or from the opener's WorkModel, else left unknown; an export written
// before the fields existed imports with the work the model gives.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "cache/detail/schema.hpp"
#include "cache/detail/sqlite_db.hpp"
#include "cache_test_util.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

using testing::Rng;
using testing::TempDir;

/// A model that knows one kernel, "gemm", at any m, n, k (read from the shape text here, apart from
/// the cache), and counts the keys it was asked.
struct GemmModel {
  std::map<std::string, int> asked;  ///< by "kernel|shape|dtype|layout"

  WorkModel model() {
    return [this](const WorkKey& k) {
      ++asked[std::string(k.kernel) + "|" + std::string(k.shape) + "|" + to_string(k.dtype) + "|" +
              std::string(k.layout)];
      if (k.kernel != "gemm") return Work{};
      long m = 0, n = 0, kk = 0;
      if (std::sscanf(std::string(k.shape).c_str(), "m=%ld,n=%ld,k=%ld", &m, &n, &kk) != 3) return Work{};
      const double mm = static_cast<double>(m), nn = static_cast<double>(n), kd = static_cast<double>(kk);
      return Work{2 * mm * nn * kd, (mm * kd + nn * kd + mm * nn) * 2};
    };
  }
};

std::map<std::string, Work> work_by_config(const ConfigCache& db) {
  std::map<std::string, Work> out;
  db.for_each_measurement({}, [&](const StoredMeasurement& s) { out[s.m.config_name] = s.m.work; });
  return out;
}

TEST(StoredWork, TravelsThroughRecordExportImportAndMerge) {
  Rng r;
  TempDir dir;
  ConfigCache db = ConfigCache::open(dir / "w.db");
  const int64_t gpu = db.upsert_gpu(testing::random_gpu(r));
  const int64_t kernel = db.upsert_kernel({"decode_attention", r.hex(16)});
  const int64_t run = db.begin_run(testing::random_run(r));
  Measurement both =
      testing::random_measurement(r, "batch=8,heads_q=32,heads_kv=8,seq=4096,head_dim=128", DType::kBF16);
  both.config_name = "both";
  both.work = Work{4.0 * 8 * 32 * 4096 * 128, 2.0 * 2 * 8 * 8 * 4096 * 128 + 2.0 * 2 * 8 * 32 * 128};
  Measurement bytes_only = both;
  bytes_only.config_name = "bytes_only";
  bytes_only.work = Work{std::nullopt, 1e9};
  Measurement none = both;
  none.config_name = "none";
  none.work = Work{};
  db.record(run, gpu, kernel, {both, bytes_only, none});

  const auto expect_all = [&](const ConfigCache& c) {
    const auto w = work_by_config(c);
    ASSERT_EQ(w.size(), 3u);
    EXPECT_EQ(w.at("both"), both.work);
    EXPECT_EQ(w.at("bytes_only"), bytes_only.work);
    EXPECT_EQ(w.at("none"), Work{});
  };
  expect_all(db);

  db.export_json(dir / "w.json");
  nlohmann::json doc = nlohmann::json::parse(testing::file_bytes(dir / "w.json"));
  for (const auto& m : doc["measurements"]) {
    if (m["config_name"] == "both") {
      EXPECT_EQ(m["work_flops"].get<double>(), *both.work.flops);
      EXPECT_EQ(m["work_bytes"].get<double>(), *both.work.bytes);
    }
    if (m["config_name"] == "none") {
      EXPECT_TRUE(m["work_flops"].is_null());
      EXPECT_TRUE(m["work_bytes"].is_null());
    }
  }
  ConfigCache imported = ConfigCache::open(dir / "imported.db");
  imported.import_json(dir / "w.json");
  expect_all(imported);
  ConfigCache merged = ConfigCache::open(dir / "merged.db");
  merged.merge(dir / "w.db");
  expect_all(merged);
}

TEST(StoredWork, RecordRefusesWorkThatIsNotPositiveAndFinite) {
  Rng r;
  TempDir dir;
  ConfigCache db = ConfigCache::open(dir / "w.db");
  const int64_t gpu = db.upsert_gpu(testing::random_gpu(r));
  const int64_t kernel = db.upsert_kernel(testing::random_kernel(r));
  const int64_t run = db.begin_run(testing::random_run(r));
  for (const Work bad : {Work{0.0, std::nullopt}, Work{std::nullopt, -5.0},
                         Work{std::numeric_limits<double>::quiet_NaN(), 1.0},
                         Work{1.0, std::numeric_limits<double>::infinity()}}) {
    Measurement m = testing::random_measurement(r, "n=4", DType::kF32);
    m.work = bad;
    try {
      db.record(run, gpu, kernel, {m});
      ADD_FAILURE() << "accepted bad work";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
      EXPECT_NE(std::string(e.what()).find("work"), std::string::npos) << e.what();
    }
  }
  int rows = 0;
  db.for_each_measurement({}, [&](const StoredMeasurement&) { ++rows; });
  EXPECT_EQ(rows, 0);
}

/// A database exactly as a schema-3 build made it, with rows written in its columns: two gemm
/// shapes (three rows), a user kernel whose resources carry its work, and a kernel no model knows.
void write_version3_database(const std::filesystem::path& path) {
  detail::Database raw(path, detail::Database::Open::kReadWriteCreate);
  detail::create_at_version(raw, 3);
  raw.exec(
      "INSERT INTO gpus (id, name, cc_major, cc_minor, sm_count, memory_bytes) VALUES (1, 'H200', 9, 0, 132, "
      "1);"
      "INSERT INTO kernels (id, name, source_hash, registered_at) VALUES"
      " (1, 'gemm', 'aa', '2026-01-01T00:00:00.000Z'), (2, 'scale', 'bb', '2026-01-01T00:00:00.000Z'),"
      " (3, 'copy', 'cc', '2026-01-01T00:00:00.000Z');"
      "INSERT INTO runs (id, started_at) VALUES (1, '2026-01-01T00:00:00.000Z');");
  const char* insert =
      "INSERT INTO measurements (run_id, gpu_id, kernel_id, shape, dtype, layout, config_name, outcome,"
      " median_us, min_us, mean_us, p90_us, stdev_us, samples, resources_json, measured_at)"
      " VALUES (1, 1, ?1, ?2, ?3, ?4, ?5, 'ok', 10, 9, 10, 11, 0.1, 20, ?6, '2026-01-01T00:00:01.000Z')";
  struct Row {
    int64_t kernel;
    const char* shape;
    const char* dtype;
    const char* layout;
    const char* config;
    const char* resources;
  };
  for (const Row& row : {Row{1, "m=16,n=4096,k=4096", "bf16", "nt", "gemm.a", "{\"registers\":128}"},
                         Row{1, "m=16,n=4096,k=4096", "bf16", "nt", "gemm.b", "{}"},
                         Row{1, "m=64,n=1024,k=512", "bf16", "nn", "gemm.c", "{}"},
                         Row{2, "n=7000", "f32", "", "scale.a", R"({"work":{"flops":7000,"bytes":56000}})"},
                         Row{3, "n=1024", "f32", "", "copy.a", "{}"}}) {
    detail::Statement s(raw, insert);
    s.bind(1, row.kernel).bind(2, row.shape).bind(3, row.dtype).bind(4, row.layout).bind(5, row.config);
    s.bind(6, row.resources);
    s.run();
  }
  EXPECT_EQ(raw.pragma_int("user_version"), 3);
}

TEST(StoredWork, AVersion3DatabaseMigratesWithWorkFromResourcesAndTheModel) {
  TempDir dir;
  const auto path = dir / "v3.db";
  write_version3_database(path);
  GemmModel model;
  ConfigCache db = ConfigCache::open(path, ConfigCache::Mode::kReadWrite, model.model());
  EXPECT_EQ(db.schema_version(), 4);
  EXPECT_TRUE(db.verify().ok);
  const auto w = work_by_config(db);
  ASSERT_EQ(w.size(), 5u);
  // By hand: 2mnk FLOPs; (mk + nk + mn) bf16 elements of 2 bytes.
  const Work gemm_16{2.0 * 16 * 4096 * 4096, (16.0 * 4096 + 4096.0 * 4096 + 16.0 * 4096) * 2};
  EXPECT_EQ(w.at("gemm.a"), gemm_16);
  EXPECT_EQ(w.at("gemm.b"), gemm_16);
  EXPECT_EQ(w.at("gemm.c"), (Work{2.0 * 64 * 1024 * 512, (64.0 * 512 + 1024.0 * 512 + 64.0 * 1024) * 2}));
  EXPECT_EQ(w.at("scale.a"), (Work{7000.0, 56000.0}));  // from its resources; the model was not needed
  EXPECT_EQ(w.at("copy.a"), Work{});                    // no one knows: unknown
  // Once a distinct key, and never for the row whose resources carried its work.
  EXPECT_EQ(model.asked.size(), 3u);
  EXPECT_EQ(model.asked.count("gemm|m=16,n=4096,k=4096|bf16|nt"), 1u);
  EXPECT_EQ(model.asked["gemm|m=16,n=4096,k=4096|bf16|nt"], 1);
  EXPECT_EQ(model.asked.count("scale|n=7000|f32|"), 0u);
  EXPECT_EQ(model.asked.count("copy|n=1024|f32|"), 1u);
}

TEST(StoredWork, AVersion3DatabaseMigratesWithoutAModel) {
  TempDir dir;
  const auto path = dir / "v3.db";
  write_version3_database(path);
  ConfigCache db = ConfigCache::open(path);
  EXPECT_EQ(db.schema_version(), 4);
  const auto w = work_by_config(db);
  EXPECT_EQ(w.at("gemm.a"), Work{});
  EXPECT_EQ(w.at("scale.a"), (Work{7000.0, 56000.0}));
}

TEST(StoredWork, AModelThatThrowsLeavesTheRowUnknownAndTheMigrationDone) {
  TempDir dir;
  const auto path = dir / "v3.db";
  write_version3_database(path);
  ConfigCache db = ConfigCache::open(path, ConfigCache::Mode::kReadWrite, [](const WorkKey&) -> Work {
    throw Error(ErrorKind::kBadInput, "cannot read this shape");
  });
  EXPECT_EQ(db.schema_version(), 4);
  EXPECT_EQ(work_by_config(db).at("gemm.a"), Work{});
}

TEST(StoredWork, ARowOfADtypeThisBuildDoesNotKnowMigratesUnaskedAndIsRefusedWhenRead) {
  TempDir dir;
  const auto path = dir / "v3.db";
  write_version3_database(path);
  {
    detail::Database raw(path, detail::Database::Open::kReadWrite);
    raw.exec(
        "INSERT INTO measurements (run_id, gpu_id, kernel_id, shape, dtype, layout, config_name, outcome,"
        " median_us, min_us, mean_us, p90_us, stdev_us, samples, resources_json, measured_at)"
        " VALUES (1, 1, 1, 'm=8,n=8,k=8', 'int3', 'nt', 'gemm.d', 'ok', 10, 9, 10, 11, 0.1, 20, '{}',"
        " '2026-01-01T00:00:02.000Z')");
  }
  GemmModel model;
  ConfigCache db = ConfigCache::open(path, ConfigCache::Mode::kReadWrite, model.model());
  EXPECT_EQ(db.schema_version(), 4);
  EXPECT_EQ(model.asked.size(), 3u) << "the model is not asked about a dtype this build cannot name";
  try {
    work_by_config(db);
    FAIL() << "a row of an unknown dtype was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("'int3'"), std::string::npos) << e.what();
  }
}

TEST(StoredWork, AnOlderExportImportsWithTheWorkTheModelGives) {
  Rng r;
  TempDir dir;
  {
    ConfigCache db = ConfigCache::open(dir / "src.db");
    const int64_t gpu = db.upsert_gpu(testing::random_gpu(r));
    const int64_t gemm = db.upsert_kernel({"gemm", r.hex(16)});
    const int64_t other = db.upsert_kernel({"softmax", r.hex(16)});
    const int64_t run = db.begin_run(testing::random_run(r));
    Measurement m = testing::random_measurement(r, "m=8,n=256,k=128", DType::kBF16);
    m.config_name = "gemm.old";
    db.record(run, gpu, gemm, {m});
    m.shape = "rows=4,cols=4096";
    m.config_name = "softmax.old";
    db.record(run, gpu, other, {m});
    db.export_json(dir / "new.json");
  }
  // An export from before schema 4 lacks the fields.
  nlohmann::json doc = nlohmann::json::parse(testing::file_bytes(dir / "new.json"));
  doc["schema_version"] = 3;
  for (auto& m : doc["measurements"]) {
    m.erase("work_flops");
    m.erase("work_bytes");
  }
  std::ofstream(dir / "old.json") << doc.dump();

  GemmModel model;
  ConfigCache with_model = ConfigCache::open(dir / "a.db", ConfigCache::Mode::kReadWrite, model.model());
  EXPECT_EQ(with_model.import_json(dir / "old.json").measurements_added, 2);
  const auto w = work_by_config(with_model);
  EXPECT_EQ(w.at("gemm.old"), (Work{2.0 * 8 * 256 * 128, (8.0 * 128 + 256.0 * 128 + 8.0 * 256) * 2}));
  EXPECT_EQ(w.at("softmax.old"), Work{});

  ConfigCache without = ConfigCache::open(dir / "b.db");
  EXPECT_EQ(without.import_json(dir / "old.json").measurements_added, 2);
  EXPECT_EQ(work_by_config(without).at("gemm.old"), Work{});
}

}  // namespace
}  // namespace ktune::cache
