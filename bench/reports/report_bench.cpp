/// How long a report over 100,000 measurements takes (the target: under 2 seconds, every format).
/// The fixture is the tests' random one (tests/reports/report_fixture.hpp), written into a real
/// ConfigCache once; each benchmark then loads from that database and writes one format to a
/// file, as `ktune report` does. docs/perf/cache-lookup.md records the figures.
///
/// KTUNE_BENCH_DB=PATH keeps the database at PATH (to time the `ktune report` binary on it).

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>

#include "cache/config_cache.hpp"
#include "fixture_db.hpp"
#include "report_fixture.hpp"
#include "reports/report_loader.hpp"
#include "reports/reporter.hpp"

namespace {

using namespace ktune;

/// The size the target is set for: 3 kernels x 160 shapes x 208 configs plus baselines = 100,320 rows.
constexpr int kShapes = 160;
constexpr int kConfigs = 208;

struct BenchDb {
  reports::testing::TempDir dir;
  std::filesystem::path db;
  size_t measurements = 0;

  BenchDb() {
    const char* keep = std::getenv("KTUNE_BENCH_DB");
    db = keep != nullptr ? std::filesystem::path(keep) : dir.path() / "bench.db";
    const reports::testing::Fixture f = reports::testing::make_fixture(
        {.seed = 2024, .shapes_per_kernel = kShapes, .configs_per_shape = kConfigs});
    measurements = f.measurements.size();
    if (!std::filesystem::exists(db)) reports::testing::write_fixture_db(f, db);
  }
};

BenchDb& bench_db() {
  static BenchDb instance;
  return instance;
}

reports::ReportData load() {
  const cache::ConfigCache db = cache::ConfigCache::open(bench_db().db, cache::ConfigCache::Mode::kReadOnly);
  return reports::load_report_data(db, {});
}

/// The cache's part of BM_Load: streaming every row out of SQLite, nothing else.
void BM_Scan(benchmark::State& state) {
  const cache::ConfigCache db = cache::ConfigCache::open(bench_db().db, cache::ConfigCache::Mode::kReadOnly);
  for (auto _ : state) {
    size_t rows = 0;
    db.for_each_measurement({}, [&](const cache::StoredMeasurement&) { ++rows; });
    benchmark::DoNotOptimize(rows);
  }
}

void BM_Load(benchmark::State& state) {
  for (auto _ : state) {
    reports::ReportData data = load();
    benchmark::DoNotOptimize(data.rows.data());
  }
  state.counters["measurements"] = static_cast<double>(bench_db().measurements);
}

void BM_Write(benchmark::State& state) {
  const std::string format = reports::formats().at(static_cast<size_t>(state.range(0))).name;
  const reports::ReportData data = load();
  const std::filesystem::path out = bench_db().dir.path() / ("write." + format);
  for (auto _ : state) reports::write_report_file(data, format, out);
  state.SetLabel(format);
  state.counters["MB"] = static_cast<double>(std::filesystem::file_size(out)) / 1e6;
}

/// The headline: open the database, load, derive, write the file.
void BM_Report(benchmark::State& state) {
  const std::string format = reports::formats().at(static_cast<size_t>(state.range(0))).name;
  const std::filesystem::path out = bench_db().dir.path() / ("report." + format);
  for (auto _ : state) reports::write_report_file(load(), format, out);
  state.SetLabel(format);
  state.counters["measurements"] = static_cast<double>(bench_db().measurements);
  state.counters["MB"] = static_cast<double>(std::filesystem::file_size(out)) / 1e6;
}

void formats(benchmark::internal::Benchmark* b) {  // every format of the table, by its index
  for (size_t i = 0; i < reports::formats().size(); ++i) b->Arg(static_cast<int64_t>(i));
}

BENCHMARK(BM_Scan)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_Write)->Apply(formats)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_Report)->Apply(formats)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  bench_db();  // build the 100,000-row database before any timing
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
