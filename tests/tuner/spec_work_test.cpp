// The work stored with measurements comes from the kernel specs (tuner/space/spec_work.hpp): every
// built-in family has it, decode_attention's bytes are K and V read over the whole context for every
// sequence plus q read and o written; the tuning loop stores it with every row it records; a
// version-3 database migrated with the spec model gets it; and the report's GB/s of a
// decode_attention row is those bytes over its median, worked here by hand from the shape.

#include "tuner/space/spec_work.hpp"

#include <gtest/gtest.h>

#include "cache/detail/schema.hpp"
#include "cache/detail/sqlite_db.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "reports/report_loader.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/loop/tuning_loop.hpp"

namespace ktune::tuner {
namespace {

namespace kt = kernel_templates;

/// batch=4, heads_q=32, heads_kv=8, seq=2048, head_dim=128 in bf16 (2 bytes), worked by hand:
/// K and V: 2 tensors x 4 x 8 x 2048 x 128 elements = 16,777,216 elements;
/// q read and o written: 2 x 4 x 32 x 128 = 32,768 elements; (16,777,216 + 32,768) x 2 bytes.
constexpr double kDecodeBytes = 33'619'968.0;
/// q.k and p.v: 2 multiply-adds (4 FLOPs) per (sequence, query head, key, element): 4 x 4 x 32 x 2048 x 128.
constexpr double kDecodeFlops = 134'217'728.0;
constexpr const char* kDecodeShape = "batch=4,heads_q=32,heads_kv=8,seq=2048,head_dim=128";

kt::Problem decode_problem() {
  kt::Problem p;
  p.dims = {{"batch", 4}, {"heads_q", 32}, {"heads_kv", 8}, {"seq", 2048}, {"head_dim", 128}};
  p.dtype = DType::kBF16;
  return p;
}

TEST(SpecWork, DecodeAttentionReadsKAndVOverTheWholeContext) {
  const cache::Work w = spec_work("decode_attention", decode_problem());
  ASSERT_TRUE(w.bytes && w.flops);
  EXPECT_DOUBLE_EQ(*w.bytes, kDecodeBytes);
  EXPECT_DOUBLE_EQ(*w.flops, kDecodeFlops);
  // The model over the stored key gives the same.
  EXPECT_EQ(spec_work_model()({"decode_attention", kDecodeShape, DType::kBF16, ""}), w);
}

TEST(SpecWork, GemmByHandAndTheLayoutPicksTheTemplate) {
  kt::Problem p;
  p.dims = {{"m", 16}, {"n", 4096}, {"k", 4096}};
  p.dtype = DType::kBF16;
  p.layout = "nt";
  const cache::Work plain = spec_work("gemm", p);
  ASSERT_TRUE(plain.flops && plain.bytes);
  EXPECT_DOUBLE_EQ(*plain.flops, 2.0 * 16 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(*plain.bytes, (16.0 * 4096 + 4096.0 * 4096 + 16.0 * 4096) * 2);
  // Only the MMA template serves a bias epilogue, and its work reads the bias (n elements) too.
  p.layout = "nt+bias";
  const cache::Work bias = spec_work("gemm", p);
  ASSERT_TRUE(bias.bytes);
  EXPECT_DOUBLE_EQ(*bias.bytes, *plain.bytes + 4096.0 * 2);
}

TEST(SpecWork, EveryBuiltInFamilyHasBytes) {
  for (const kt::FamilyInfo& family : kt::template_families()) {
    const kt::KernelSpec& spec = *kt::specs_of(family.name).front();
    kt::Problem p;
    for (const std::string& d : spec.dims()) p.dims.emplace_back(d, 64);
    p.dtype = spec.dtypes().front();
    p.layout = spec.layouts().front();
    const cache::Work w = spec_work(family.name, p);
    ASSERT_TRUE(w.bytes.has_value()) << family.name;
    EXPECT_GT(*w.bytes, 0) << family.name;
  }
}

TEST(SpecWork, UnknownKernelsAndShapesGiveNothing) {
  const cache::WorkModel model = spec_work_model();
  EXPECT_EQ(model({"copy", "n=1024", DType::kF32, ""}), cache::Work{});  // measured, never tuned: no spec
  EXPECT_EQ(model({"no_such_kernel", "n=1", DType::kF32, ""}), cache::Work{});
  EXPECT_EQ(model({"decode_attention", "batch=4,heads_q=32", DType::kBF16, ""}),
            cache::Work{});  // dims missing
  EXPECT_EQ(model({"decode_attention", "not a shape", DType::kBF16, ""}), cache::Work{});
}

TEST(SpecWork, TheLoopStoresItWithEveryRowAndTheReportDerivesGbpsFromIt) {
  test::TempDir dir;
  static const auto sources = kt::SourceLibrary::builtin();
  const cache::GpuInfo gpu{"Fake H200", 9, 0, 132, int64_t{141} << 30, R"({"copy_gbps":4000})"};
  {
    auto db = cache::ConfigCache::open(dir / "w.db");
    test::FakeMeasurer measurer;
    TuneOptions o;
    o.strategy = "exhaustive";
    o.budget = 12;
    o.compile_threads = 2;
    o.counters = false;
    TuningLoop loop(db, gpu, cache::RunInfo{}, o,
                    LoopDeps{test::fake_compile(), &measurer, &sources, nullptr});
    const KeySummary s = loop.tune(
        ConfigSpace::load(configs_dir() / "spaces" / "decode_attention.toml"),
        {"decode_attention",
         NamedShape{"test",
                    {{"batch", 4}, {"heads_q", 32}, {"heads_kv", 8}, {"seq", 2048}, {"head_dim", 128}}},
         DType::kBF16, ""});
    ASSERT_TRUE(s.winner.has_value()) << s.error;
  }
  const auto db = cache::ConfigCache::open(dir / "w.db", cache::ConfigCache::Mode::kReadOnly);
  const auto rows = test::all_measurements(db);
  ASSERT_FALSE(rows.empty());
  for (const cache::StoredMeasurement& m : rows) {
    EXPECT_EQ(m.m.work.bytes, kDecodeBytes) << m.m.config_name << " " << ktune::to_string(m.m.outcome);
    EXPECT_EQ(m.m.work.flops, kDecodeFlops) << m.m.config_name;
  }
  const reports::ReportData data = reports::load_report_data(db, {});
  size_t timed = 0;
  for (const reports::ReportRow& row : data.rows) {
    if (!row.timed_ok()) continue;
    ++timed;
    const double seconds = row.median_us() * 1e-6;
    ASSERT_TRUE(row.roofline.gbps) << row.stored.m.config_name;
    EXPECT_DOUBLE_EQ(*row.roofline.gbps, kDecodeBytes / seconds / 1e9);
    // Memory-bound against 4000 GB/s: the fastest time is bytes / 4000e9.
    ASSERT_TRUE(row.roofline.pct_of_ceiling);
    EXPECT_DOUBLE_EQ(*row.roofline.pct_of_ceiling, 100.0 * (kDecodeBytes / 4000e9) / seconds);
  }
  EXPECT_GT(timed, 0u);
}

TEST(SpecWork, AVersion3DatabaseMigratedWithTheSpecModelReportsDecodeAttentionGbps) {
  test::TempDir dir;
  const auto path = dir / "v3.db";
  constexpr double kMedianUs = 20.0;
  {
    cache::detail::Database raw(path, cache::detail::Database::Open::kReadWriteCreate);
    cache::detail::create_at_version(raw, 3);
    raw.exec(
        "INSERT INTO gpus (id, name, cc_major, cc_minor, sm_count, memory_bytes, ceilings_json)"
        " VALUES (1, 'NVIDIA H200', 9, 0, 132, 1, '{\"copy_gbps\":4000}');"
        "INSERT INTO kernels (id, name, source_hash, registered_at) VALUES"
        " (1, 'decode_attention', 'aa', '2026-01-01T00:00:00.000Z');"
        "INSERT INTO runs (id, started_at) VALUES (1, '2026-01-01T00:00:00.000Z');");
    cache::detail::Statement s(
        raw,
        "INSERT INTO measurements (run_id, gpu_id, kernel_id, shape, dtype, layout, config_name, outcome,"
        " median_us, min_us, mean_us, p90_us, stdev_us, samples, measured_at)"
        " VALUES (1, 1, 1, ?1, 'bf16', '', 'decode_attention.x', 'ok', ?2, ?2, ?2, ?2, 0, 20,"
        " '2026-01-01T00:00:01.000Z')");
    s.bind(1, kDecodeShape).bind(2, kMedianUs);
    s.run();
  }
  { auto migrated = cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadWrite, spec_work_model()); }
  const auto db = cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly);
  const reports::ReportData data = reports::load_report_data(db, {});
  ASSERT_EQ(data.rows.size(), 1u);
  ASSERT_TRUE(data.rows[0].roofline.gbps);
  // 33,619,968 bytes in 20 us: 1680.9984 GB/s.
  EXPECT_DOUBLE_EQ(*data.rows[0].roofline.gbps, 1680.9984);
  EXPECT_EQ(data.rows[0].roofline.bound, "memory");
}

}  // namespace
}  // namespace ktune::tuner
