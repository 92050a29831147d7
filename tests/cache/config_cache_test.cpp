#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "cache_test_util.hpp"
#include "core/shape.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

using testing::Rng;
using testing::TempDir;

struct Fixture {
  Rng r;
  TempDir dir;
  ConfigCache db = ConfigCache::open(dir / "sub/dir/ktune.db");
  GpuInfo gpu = testing::random_gpu(r);
  KernelInfo kernel = testing::random_kernel(r);
  int64_t gpu_id = db.upsert_gpu(gpu);
  int64_t kernel_id = db.upsert_kernel(kernel);
  int64_t run_id = db.begin_run(testing::random_run(r));
};

TEST(Outcome, NamesRoundTripAndUnknownIsBadInput) {
  for (int i = 0; i < 8; ++i) {
    const auto o = static_cast<Outcome>(i);
    EXPECT_EQ(outcome_from_string(to_string(o)), o);
  }
  EXPECT_EQ(to_string(Outcome::kExceedsLimits), "exceeds_limits");
  try {
    (void)outcome_from_string("exploded");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
  }
}

TEST(ConfigCache, CreatesParentFoldersAndSchema) {
  Fixture f;
  EXPECT_TRUE(std::filesystem::exists(f.dir / "sub/dir/ktune.db"));
  EXPECT_EQ(f.db.schema_version(), kSchemaVersion);
  EXPECT_TRUE(f.db.verify().ok);
  EXPECT_EQ(f.db.upsert_gpu(f.gpu), f.gpu_id);  // upsert: same key, same row
  EXPECT_EQ(f.db.upsert_kernel(f.kernel), f.kernel_id);
  const auto gpus = f.db.gpus();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].name, f.gpu.name);
  EXPECT_EQ(gpus[0].memory_bytes, f.gpu.memory_bytes);
  EXPECT_EQ(gpus[0].ceilings_json, f.gpu.ceilings_json);
}

TEST(ConfigCache, GpuNamesAreDistinctWhereRowsAreNot) {
  Fixture f;
  GpuInfo other_memory = f.gpu;  // the same GPU name seen with another memory size and SM count
  other_memory.memory_bytes += 1 << 20;
  other_memory.sm_count += 2;
  GpuInfo second = f.gpu;
  second.name = "A " + f.gpu.name;  // sorts first
  EXPECT_NE(f.db.upsert_gpu(other_memory), f.gpu_id);
  f.db.upsert_gpu(second);
  EXPECT_EQ(f.db.gpus().size(), 3u);
  EXPECT_EQ(f.db.gpu_names(), (std::vector<std::string>{second.name, f.gpu.name}));
}

TEST(ConfigCache, RecordKeepsEveryFieldAndBestPicksTheNamedWinner) {
  Fixture f;
  SCOPED_TRACE(f.r.seed());
  std::vector<Measurement> ms;
  const std::string shape = testing::random_shape(f.r);
  for (int i = 0; i < 30; ++i) ms.push_back(testing::random_measurement(f.r, shape, DType::kBF16));
  for (int i = 0; i < 5; ++i) ms.push_back(testing::random_failure(f.r, shape, DType::kBF16));
  const auto ids = f.db.record(f.run_id, f.gpu_id, f.kernel_id, ms);
  ASSERT_EQ(ids.size(), ms.size());

  std::vector<StoredMeasurement> back;
  f.db.for_each_measurement({}, [&](const StoredMeasurement& s) { back.push_back(s); });
  ASSERT_EQ(back.size(), ms.size());
  for (size_t i = 0; i < ms.size(); ++i) {
    const Measurement& a = ms[i];
    const Measurement& b = back[i].m;
    EXPECT_EQ(back[i].id, ids[i]);
    EXPECT_EQ(back[i].run_id, f.run_id);
    EXPECT_EQ(back[i].gpu.name, f.gpu.name);
    EXPECT_EQ(back[i].kernel.source_hash, f.kernel.source_hash);
    EXPECT_EQ(b.config_name, a.config_name);
    EXPECT_EQ(b.config_json, a.config_json);
    EXPECT_EQ(b.outcome, a.outcome);
    EXPECT_EQ(b.reason, a.reason);
    ASSERT_EQ(b.stats.has_value(), a.stats.has_value());
    if (a.stats) {
      EXPECT_EQ(b.stats->median_us, a.stats->median_us);
      EXPECT_EQ(b.stats->p90_us, a.stats->p90_us);
      EXPECT_EQ(b.stats->samples, a.stats->samples);
    }
    EXPECT_EQ(b.counters_json, a.counters_json);
    EXPECT_EQ(b.resources_json, a.resources_json);
    EXPECT_EQ(b.sm_clock_mhz, a.sm_clock_mhz);
    EXPECT_EQ(b.temperature_c, a.temperature_c);
    EXPECT_FALSE(back[i].measured_at.empty());
  }

  // The winner: the lowest median among ok rows, found independently here.
  size_t win = 0;
  for (size_t i = 0; i < 30; ++i) {
    if (ms[i].stats->median_us < ms[win].stats->median_us) win = i;
  }
  EXPECT_FALSE(f.db.best({f.gpu.name, f.kernel.name, shape, DType::kBF16, std::nullopt, ""}).has_value());
  f.db.set_best(ids[win]);
  const auto best = f.db.best({f.gpu.name, f.kernel.name, shape, DType::kBF16, std::nullopt, ""});
  ASSERT_TRUE(best.has_value());
  EXPECT_FALSE(best->fallback);
  EXPECT_EQ(best->config_name, ms[win].config_name);
  EXPECT_EQ(best->config_json, ms[win].config_json);
  EXPECT_EQ(best->stats.median_us, ms[win].stats->median_us);
  EXPECT_EQ(best->measurement_id, ids[win]);
  EXPECT_EQ(best->tuned_shape, shape);
  const auto j = nlohmann::json::parse(best->to_json());
  EXPECT_EQ(j.at("config_name"), ms[win].config_name);
  EXPECT_EQ(j.at("fallback"), false);
  EXPECT_EQ(j.at("config"), nlohmann::json::parse(ms[win].config_json));

  // Other dtype, GPU or kernel: no answer.
  EXPECT_FALSE(f.db.best({f.gpu.name, f.kernel.name, shape, DType::kF16, std::nullopt, ""}).has_value());
  EXPECT_FALSE(f.db.best({"other", f.kernel.name, shape, DType::kBF16, std::nullopt, ""}).has_value());
  EXPECT_FALSE(f.db.best({f.gpu.name, "other", shape, DType::kBF16, std::nullopt, ""}).has_value());
  EXPECT_FALSE(
      f.db.best({f.gpu.name, f.kernel.name, shape, DType::kBF16, std::string("feed"), ""}).has_value());
  EXPECT_TRUE(
      f.db.best({f.gpu.name, f.kernel.name, shape, DType::kBF16, f.kernel.source_hash, ""}).has_value());

  // A failed measurement may not win; an unknown id is not found.
  try {
    f.db.set_best(ids[32]);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
  }
  try {
    f.db.set_best(ids.back() + 1000);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
  }
  EXPECT_TRUE(f.db.has_measurement(f.gpu_id, f.kernel_id, shape, DType::kBF16, ms[7].config_name));
  EXPECT_FALSE(f.db.has_measurement(f.gpu_id, f.kernel_id, shape, DType::kF16, ms[7].config_name));
  EXPECT_TRUE(f.db.verify().ok);
}

TEST(ConfigCache, FallbackPicksNearestTunedShapeAndSaysSo) {
  Fixture f;
  SCOPED_TRACE(f.r.seed());
  std::vector<std::string> shapes;
  std::map<std::string, std::string> winner;  // shape -> config name
  for (int i = 0; i < 12; ++i) {
    const std::string shape = testing::random_shape(f.r);
    const auto ids =
        f.db.record(f.run_id, f.gpu_id, f.kernel_id, {testing::random_measurement(f.r, shape, DType::kF16)});
    f.db.set_best(ids[0]);
    shapes.push_back(shape);
    std::vector<StoredMeasurement> rows;
    f.db.for_each_measurement({}, [&](const StoredMeasurement& s) {
      if (s.id == ids[0]) winner[shape] = s.m.config_name;
    });
  }
  for (int q = 0; q < 20; ++q) {
    const std::string asked = testing::random_shape(f.r);
    // Independent nearest: log-space distance computed here.
    const auto dims = [](const std::string& s) {
      int64_t m, n, k;
      std::sscanf(s.c_str(), "m=%ld,n=%ld,k=%ld", &m, &n, &k);
      return std::array<double, 3>{double(m), double(n), double(k)};
    };
    const auto a = dims(asked);
    std::string want;
    double best_d = std::numeric_limits<double>::infinity();
    for (const auto& s : shapes) {
      const auto b = dims(s);
      double d = 0;
      for (int i = 0; i < 3; ++i) d += std::fabs(std::log2(a[i]) - std::log2(b[i]));
      if (d < best_d - 1e-12 || (std::fabs(d - best_d) <= 1e-12 && s < want)) {
        best_d = d;
        want = s;
      }
    }
    const auto got = f.db.best({f.gpu.name, f.kernel.name, asked, DType::kF16, std::nullopt, ""});
    ASSERT_TRUE(got.has_value());
    if (std::find(shapes.begin(), shapes.end(), asked) != shapes.end()) continue;
    EXPECT_TRUE(got->fallback);
    EXPECT_EQ(got->shape, asked);
    EXPECT_EQ(got->tuned_shape, want);
    EXPECT_EQ(got->config_name, winner[want]);
    EXPECT_EQ(nlohmann::json::parse(got->to_json()).at("fallback"), true);
    EXPECT_FALSE(
        f.db.best({f.gpu.name, f.kernel.name, asked, DType::kF16, std::nullopt, ""}, false).has_value());
  }
  // Another dtype has nothing to fall back on.
  EXPECT_FALSE(f.db.best({f.gpu.name, f.kernel.name, shapes[0], DType::kBF16, std::nullopt, ""}).has_value());
}

TEST(ConfigCache, LookupWithoutHashUsesMostRecentRegistration) {
  Fixture f;
  const KernelInfo newer{f.kernel.name, f.r.hex(16)};
  const int64_t newer_id = f.db.upsert_kernel(newer);
  const std::string shape = testing::random_shape(f.r);
  const auto old_ids =
      f.db.record(f.run_id, f.gpu_id, f.kernel_id, {testing::random_measurement(f.r, shape, DType::kF32)});
  const auto new_ids =
      f.db.record(f.run_id, f.gpu_id, newer_id, {testing::random_measurement(f.r, shape, DType::kF32)});
  f.db.set_best(old_ids[0]);
  f.db.set_best(new_ids[0]);
  EXPECT_EQ(f.db.current_source_hash(f.kernel.name), newer.source_hash);
  auto got = f.db.best({f.gpu.name, f.kernel.name, shape, DType::kF32, std::nullopt, ""});
  ASSERT_TRUE(got);
  EXPECT_EQ(got->measurement_id, new_ids[0]);
  EXPECT_EQ(got->kernel.source_hash, newer.source_hash);
  got = f.db.best({f.gpu.name, f.kernel.name, shape, DType::kF32, f.kernel.source_hash, ""});
  ASSERT_TRUE(got);
  EXPECT_EQ(got->measurement_id, old_ids[0]);
  EXPECT_EQ(f.db.list_best().size(), 2u);
}

TEST(ConfigCache, ListBestFilters) {
  Fixture f;
  const GpuInfo gpu2 = testing::random_gpu(f.r);
  const int64_t gpu2_id = f.db.upsert_gpu(gpu2);
  int per_gpu[2] = {0, 0};
  for (int i = 0; i < 20; ++i) {
    const bool second = f.r.coin();
    const DType dtype = f.r.coin() ? DType::kBF16 : DType::kF16;
    const auto ids = f.db.record(f.run_id, second ? gpu2_id : f.gpu_id, f.kernel_id,
                                 {testing::random_measurement(f.r, testing::random_shape(f.r), dtype)});
    f.db.set_best(ids[0]);
    ++per_gpu[second];
  }
  EXPECT_EQ(f.db.list_best().size(), 20u);
  EXPECT_EQ(f.db.list_best({f.gpu.name, "", std::nullopt, std::nullopt, std::nullopt}).size(),
            size_t(per_gpu[0]));
  EXPECT_EQ(f.db.list_best({gpu2.name, "", std::nullopt, std::nullopt, std::nullopt}).size(),
            size_t(per_gpu[1]));
  for (const auto& b : f.db.list_best({"", "", DType::kBF16, std::nullopt, std::nullopt}))
    EXPECT_EQ(b.dtype, DType::kBF16);
  EXPECT_EQ(f.db.list_best({"", "nope", std::nullopt, std::nullopt, std::nullopt}).size(), 0u);
  EXPECT_EQ(f.db.list_best({"", "", std::nullopt, f.run_id, std::nullopt}).size(), 20u);
  EXPECT_EQ(f.db.list_best({"", "", std::nullopt, f.run_id + 1, std::nullopt}).size(), 0u);
}

TEST(ConfigCache, RejectsBadRowsWithBadInput) {
  Fixture f;
  Measurement m = testing::random_measurement(f.r, testing::random_shape(f.r), DType::kBF16);
  m.config_json = "not json";
  try {
    f.db.record(f.run_id, f.gpu_id, f.kernel_id, {m});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
  }
  m = testing::random_measurement(f.r, testing::random_shape(f.r), DType::kBF16);
  try {
    f.db.record(f.run_id + 77, f.gpu_id, f.kernel_id, {m});  // no such run: foreign key
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
  }
  // The failed transactions left nothing behind.
  int rows = 0;
  f.db.for_each_measurement({}, [&](const StoredMeasurement&) { ++rows; });
  EXPECT_EQ(rows, 0);
}

TEST(ConfigCache, CompileCacheStoresAndFinds) {
  Fixture f;
  CompiledArtifact a;
  a.key = f.r.hex(32);
  for (int i = 0; i < 5000; ++i) a.cubin += static_cast<char>(f.r.uniform(0, 255));  // binary, with NULs
  a.log = "ptxas info: " + f.r.word(20);
  a.lowered_names_json = R"({"k<1>":"_Z1kILi1EEvv"})";
  a.resources_json = R"({"registers":96})";
  a.compile_ms = f.r.real(10, 900);
  a.kernel_name = f.kernel.name;
  a.source_hash = f.kernel.source_hash;
  EXPECT_FALSE(f.db.find_compiled(a.key).has_value());
  f.db.store_compiled(a);
  const auto got = f.db.find_compiled(a.key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->cubin, a.cubin);
  EXPECT_EQ(got->log, a.log);
  EXPECT_EQ(got->lowered_names_json, a.lowered_names_json);
  EXPECT_EQ(got->resources_json, a.resources_json);
  EXPECT_EQ(got->compile_ms, a.compile_ms);
  EXPECT_EQ(got->kernel_name, a.kernel_name);
  EXPECT_FALSE(f.db.find_compiled(a.key + "x").has_value());
  a.log = "replaced";
  f.db.store_compiled(a);
  EXPECT_EQ(f.db.find_compiled(a.key)->log, "replaced");
}

TEST(ConfigCache, PruneRemovesStaleKernelsOnly) {
  Fixture f;
  SCOPED_TRACE(f.r.seed());
  const KernelInfo current{f.kernel.name, f.r.hex(16)};
  const KernelInfo other = testing::random_kernel(f.r);
  const int64_t current_id = f.db.upsert_kernel(current);
  const int64_t other_id = f.db.upsert_kernel(other);
  const std::string shape = testing::random_shape(f.r);
  std::map<int64_t, int> count;
  for (const int64_t kid : {f.kernel_id, current_id, other_id}) {
    std::vector<Measurement> ms;
    const int n = static_cast<int>(f.r.uniform(3, 20));
    for (int i = 0; i < n; ++i) ms.push_back(testing::random_measurement(f.r, shape, DType::kBF16));
    const auto ids = f.db.record(f.run_id, f.gpu_id, kid, ms);
    f.db.set_best(ids[0]);
    count[kid] = n;
  }
  CompiledArtifact stale{f.r.hex(32), "cubin-a", "", "{}", "{}", 1.0, f.kernel.name, f.kernel.source_hash};
  CompiledArtifact fresh{f.r.hex(32), "cubin-b", "", "{}", "{}", 1.0, current.name, current.source_hash};
  CompiledArtifact anonymous{f.r.hex(32), "cubin-c", "", "{}", "{}", 1.0, "", ""};
  for (const auto& a : {stale, fresh, anonymous}) f.db.store_compiled(a);

  const PruneStats st = f.db.prune({{current.name, current.source_hash}});
  EXPECT_EQ(st.kernels_removed, 1);
  EXPECT_EQ(st.measurements_removed, count[f.kernel_id]);
  EXPECT_EQ(st.compile_entries_removed, 1);
  EXPECT_FALSE(f.db.find_compiled(stale.key));
  EXPECT_TRUE(f.db.find_compiled(fresh.key));
  EXPECT_TRUE(f.db.find_compiled(anonymous.key));
  std::map<std::string, int> left;
  f.db.for_each_measurement({}, [&](const StoredMeasurement& s) { ++left[s.kernel.source_hash]; });
  EXPECT_EQ(left.count(f.kernel.source_hash), 0u);
  EXPECT_EQ(left[current.source_hash], count[current_id]);
  EXPECT_EQ(left[other.source_hash], count[other_id]);
  EXPECT_EQ(f.db.list_best().size(), 2u);
  EXPECT_TRUE(f.db.verify().ok);
}

TEST(ConfigCache, ReadOnlyHandleRefusesWrites) {
  Fixture f;
  const auto path = f.db.path();
  ConfigCache ro = ConfigCache::open(path, ConfigCache::Mode::kReadOnly);
  EXPECT_EQ(ro.gpus().size(), 1u);
  try {
    ro.upsert_gpu(testing::random_gpu(f.r));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
  }
}

TEST(DbPath, FlagThenEnvThenXdgThenHome) {
  TempDir dir;
  const char* old_db = std::getenv("KTUNE_DB");
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_db = old_db ? old_db : "", saved_xdg = old_xdg ? old_xdg : "";
  ::setenv("KTUNE_DB", (dir / "env.db").c_str(), 1);
  ::setenv("XDG_CACHE_HOME", (dir / "xdg").c_str(), 1);
  EXPECT_EQ(resolve_db_path(std::string("/x/flag.db")), "/x/flag.db");
  EXPECT_EQ(resolve_db_path(std::nullopt), dir / "env.db");
  ::unsetenv("KTUNE_DB");
  EXPECT_EQ(resolve_db_path(std::nullopt), dir / "xdg/ktune/ktune.db");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(resolve_db_path(std::nullopt),
            std::filesystem::path(std::getenv("HOME")) / ".cache/ktune/ktune.db");
  if (old_db) ::setenv("KTUNE_DB", saved_db.c_str(), 1);
  if (old_xdg) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
}

}  // namespace
}  // namespace ktune::cache

namespace ktune::cache {
namespace {

TEST(ConfigCacheKernels, ReRegisteringWithinOneMillisecondStillMakesTheHashCurrent) {
  // Registrations in a tight loop land within one millisecond: the order of the calls, not of the
  // row ids, decides which hash is current.
  testing::Rng r;
  SCOPED_TRACE(r.seed());
  testing::TempDir dir;
  ConfigCache db = ConfigCache::open(dir / "a.db");
  const std::string name = "k_" + r.word(6);
  const std::string first = r.hex(16);
  const std::string second = first + "b";
  for (int i = 0; i < 50; ++i) {
    db.upsert_kernel({name, first});
    db.upsert_kernel({name, second});
    ASSERT_EQ(db.current_source_hash(name), second) << "round " << i;
    db.upsert_kernel({name, first});
    ASSERT_EQ(db.current_source_hash(name), first) << "round " << i;
  }
}

}  // namespace
}  // namespace ktune::cache
