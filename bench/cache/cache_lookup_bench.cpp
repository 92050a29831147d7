// Best-config lookup over a database of 100,000 measurements:
// the first lookup on a fresh handle (SQLite), repeated lookups through SQLite, and repeated
// lookups through the in-memory BestIndex that the dispatch runtime uses.
// Figures: docs/perf/cache-lookup.md.

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cache/best_index.hpp"
#include "cache/config_cache.hpp"

namespace {

using namespace ktune::cache;
namespace fs = std::filesystem;

// 10 kernels x 2 dtypes x 50 shapes = 1,000 tuned keys, 100 configs measured for each.
constexpr int kKernels = 10;
constexpr int kShapes = 50;
constexpr int kConfigs = 100;
const ktune::DType kDtypes[] = {ktune::DType::kBF16, ktune::DType::kF16};
const char* const kGpu = "NVIDIA H200";

struct Key {
  std::string kernel, shape;
  ktune::DType dtype;
};

struct Data {
  fs::path path;
  std::vector<Key> keys;    ///< every tuned key, shuffled
  std::vector<Key> misses;  ///< untuned shapes of tuned kernels (fallback lookups)
};

std::string shape_text(std::mt19937_64& g) {
  std::uniform_int_distribution<int> e(4, 14);  // dimensions 16 .. 16384
  return fmt::format("m={},n={},k={}", 1 << e(g), 1 << e(g), 1 << e(g));
}

/// The database: $KTUNE_BENCH_DB when set (built there once and kept, so repeated runs skip the
/// build), else a file in the temp folder built for this process and removed at exit.
/// The content is the same every time (fixed seed).
const Data& data() {
  static const Data d = [] {
    Data out;
    const char* keep = std::getenv("KTUNE_BENCH_DB");
    out.path = keep != nullptr
                   ? fs::path(keep)
                   : fs::temp_directory_path() / fmt::format("ktune-bench-cache-{}.db", ::getpid());
    const bool build = keep == nullptr || !fs::exists(out.path);
    if (keep == nullptr) fs::remove(out.path);
    std::mt19937_64 g(20250101);
    std::uniform_real_distribution<double> us(2.0, 800.0);
    std::optional<ConfigCache> db;
    int64_t gpu = 0, run = 0;
    if (build) {
      db.emplace(ConfigCache::open(out.path));
      gpu = db->upsert_gpu({kGpu, 9, 0, 132, int64_t{141} << 30, "{}"});
      run = db->begin_run({"", "bench", "0.1.0", "ktune_bench_cache", "", ""});
    }
    for (int k = 0; k < kKernels; ++k) {
      const std::string kernel = fmt::format("kernel_{}", k);
      const std::string hash = fmt::format("{:016x}", g());
      const int64_t kid = build ? db->upsert_kernel({kernel, hash}) : 0;
      for (const ktune::DType dtype : kDtypes) {
        for (int s = 0; s < kShapes; ++s) {
          const std::string shape = fmt::format("m={},n={},k={}", 16 * (s + 1), 4096, 1024 << (s % 4));
          std::vector<Measurement> ms(kConfigs);
          size_t winner = 0;
          for (int c = 0; c < kConfigs; ++c) {
            Measurement& m = ms[static_cast<size_t>(c)];
            m.shape = shape;
            m.dtype = dtype;
            m.config_name = fmt::format("{}.{}.cfg{}", kernel, to_string(dtype), c);
            m.config_json =
                fmt::format(R"({{"bm":{},"bn":{},"stages":{}}})", 16 << (c % 4), 16 << (c / 4 % 4), c % 5);
            const double med = us(g);
            m.stats = Stats{med, med * 0.95, med * 1.02, med * 1.1, med * 0.01, 50};
            if (med < ms[winner].stats->median_us) winner = static_cast<size_t>(c);
          }
          if (build) db->set_best(db->record(run, gpu, kid, ms)[winner]);
          out.keys.push_back({kernel, shape, dtype});
        }
      }
      for (int i = 0; i < 20; ++i) out.misses.push_back({kernel, shape_text(g), kDtypes[i % 2]});
    }
    std::shuffle(out.keys.begin(), out.keys.end(), g);
    return out;
  }();
  return d;
}

Lookup lookup_of(const Key& k) { return Lookup{kGpu, k.kernel, k.shape, k.dtype, std::nullopt, ""}; }

/// Open a handle and ask once: what a short-lived program (ktune query, a script) pays.
void BM_FirstLookup_OpenAndBest(benchmark::State& state) {
  const Data& d = data();
  size_t i = 0;
  for (auto _ : state) {
    ConfigCache db = ConfigCache::open(d.path, ConfigCache::Mode::kReadOnly);
    auto b = db.best(lookup_of(d.keys[i++ % d.keys.size()]));
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_FirstLookup_OpenAndBest)->Unit(benchmark::kMicrosecond);

/// The first best() on a freshly opened handle (statements not yet prepared); the open is not timed.
void BM_FirstLookup_FreshHandle(benchmark::State& state) {
  const Data& d = data();
  size_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto db = std::make_unique<ConfigCache>(ConfigCache::open(d.path, ConfigCache::Mode::kReadOnly));
    const Lookup q = lookup_of(d.keys[i++ % d.keys.size()]);
    state.ResumeTiming();
    auto b = db->best(q);
    benchmark::DoNotOptimize(b);
    state.PauseTiming();
    db.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_FirstLookup_FreshHandle)->Unit(benchmark::kMicrosecond);

/// Repeated exact lookups through SQLite on one handle (prepared statements cached).
void BM_RepeatedLookup_Sqlite(benchmark::State& state) {
  const Data& d = data();
  ConfigCache db = ConfigCache::open(d.path, ConfigCache::Mode::kReadOnly);
  std::vector<Lookup> qs;
  for (const Key& k : d.keys) qs.push_back(lookup_of(k));
  size_t i = 0;
  for (auto _ : state) {
    auto b = db.best(qs[i++ % qs.size()]);
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_RepeatedLookup_Sqlite)->Unit(benchmark::kMicrosecond);

/// Repeated lookups of untuned shapes: SQLite plus the nearest-shape scan (flagged fallback).
void BM_RepeatedLookup_SqliteFallback(benchmark::State& state) {
  const Data& d = data();
  ConfigCache db = ConfigCache::open(d.path, ConfigCache::Mode::kReadOnly);
  size_t i = 0;
  for (auto _ : state) {
    auto b = db.best(lookup_of(d.misses[i++ % d.misses.size()]));
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_RepeatedLookup_SqliteFallback)->Unit(benchmark::kMicrosecond);

/// Loading the in-memory index of one GPU (all 1,000 best rows).
void BM_BestIndex_Load(benchmark::State& state) {
  const Data& d = data();
  ConfigCache db = ConfigCache::open(d.path, ConfigCache::Mode::kReadOnly);
  for (auto _ : state) {
    BestIndex idx = BestIndex::load(db, kGpu);
    benchmark::DoNotOptimize(idx);
  }
}
BENCHMARK(BM_BestIndex_Load)->Unit(benchmark::kMicrosecond);

/// Repeated exact lookups through BestIndex (the dispatch runtime's hot path).
void BM_RepeatedLookup_BestIndex(benchmark::State& state) {
  const Data& d = data();
  ConfigCache db = ConfigCache::open(d.path, ConfigCache::Mode::kReadOnly);
  const BestIndex idx = BestIndex::load(db, kGpu);
  if (idx.size() != d.keys.size()) state.SkipWithError("index does not hold every key");
  size_t i = 0;
  for (auto _ : state) {
    const Key& k = d.keys[i++ % d.keys.size()];
    const BestConfig* b = idx.find(k.kernel, k.shape, k.dtype, "");
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_RepeatedLookup_BestIndex);

/// A miss in BestIndex (an untuned shape), before any fallback.
void BM_RepeatedLookup_BestIndexMiss(benchmark::State& state) {
  const Data& d = data();
  ConfigCache db = ConfigCache::open(d.path, ConfigCache::Mode::kReadOnly);
  const BestIndex idx = BestIndex::load(db, kGpu);
  size_t i = 0;
  for (auto _ : state) {
    const Key& k = d.misses[i++ % d.misses.size()];
    const BestConfig* b = idx.find(k.kernel, k.shape, k.dtype, "");
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_RepeatedLookup_BestIndexMiss);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (std::getenv("KTUNE_BENCH_DB") != nullptr) return 0;
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    fs::path p = data().path;
    p += suffix;
    fs::remove(p, ec);
  }
  return 0;
}
