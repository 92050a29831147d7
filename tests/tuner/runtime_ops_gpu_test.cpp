// ktune::Runtime's operators on a GPU: rmsnorm (plain and residual), rmsnorm_rope (NeoX, GPT-J),
// softmax (no mask, causal, padding), swiglu (fused, split) against the float64 CPU references at
// odd sizes on random non-zero data, each also replayed from a captured CUDA graph; the caller's
// eps, scale and max_pos differ from the specs' constants, so a runtime that dropped them fails.
// Then a tuned config with a required alignment and a misaligned call (the fallback), and the D8
// refusals that need a device.

#include <gtest/gtest.h>

#include <cuda.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "cache/config_cache.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "core/dtype.hpp"
#include "kernel_templates/reference_ops.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/ktune.hpp"
#include "tests/tuner/gpu_test_util.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tests/tuner/runtime_ops_gpu_util.hpp"
#include "tests/tuner/test_util.hpp"

namespace ktune::tuner {
namespace {

using namespace ops_gpu_test;
namespace kt = kernel_templates;
using harness::DeviceBuffer;

class RuntimeOpsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    KTUNE_SKIP_WITHOUT_GPU();
    RuntimeOptions o;
    o.db_path = (dir_ / "none.db").string();  // no database: the default configs
    rt_ = std::make_unique<Runtime>(o);
  }
  test::TempDir dir_;
  std::unique_ptr<Runtime> rt_;
};

constexpr DType kDtypes[] = {DType::kBF16, DType::kF16, DType::kF32};

TEST_F(RuntimeOpsGpu, RmsNormPlainAndResidualMatchTheReference) {
  const int64_t rows = 7, hidden = 4095;
  const float eps = 0.5f;  // large enough that the spec's 1e-6 would show
  for (DType dt : kDtypes) {
    Tensor x(rows * hidden, dt, 1), res(rows * hidden, dt, 2), w(hidden, dt, 3);
    Output y(rows * hidden, dt), res_out(rows * hidden, dt);
    const auto plain = kt::rmsnorm_f64(x.values, {}, w.values, rows, hidden, eps, hdt(dt));
    const auto fused = kt::rmsnorm_f64(x.values, res.values, w.values, rows, hidden, eps, hdt(dt));
    for (bool graph : {false, true}) {
      if (graph) {
        rt_->prepare_rmsnorm(rows, hidden, dt);
        rt_->prepare_rmsnorm(rows, hidden, dt, true);
      }
      y.poison();
      run(graph, [&](Stream s) { rt_->rmsnorm(x.ptr(), w.ptr(), y.ptr(), rows, hidden, eps, dt, s); });
      EXPECT_LE(error(y.read(), plain.y), tolerance(dt)) << to_string(dt) << " graph=" << graph;
      y.poison();
      res_out.poison();
      run(graph, [&](Stream s) {
        rt_->rmsnorm_residual(x.ptr(), res.ptr(), w.ptr(), y.ptr(), res_out.ptr(), rows, hidden, eps, dt, s);
      });
      EXPECT_LE(error(y.read(), fused.y), tolerance(dt)) << to_string(dt) << " residual graph=" << graph;
      EXPECT_LE(error(res_out.read(), fused.residual_out), tolerance(dt)) << to_string(dt) << " residual_out";
    }
  }
}

TEST_F(RuntimeOpsGpu, RmsNormRopeNeoxAndGptjMatchTheReference) {
  const int64_t tokens = 5, hq = 7, hk = 3, max_pos = 37;  // positions wrap modulo the table's 37 rows
  const float eps = 0.25f;
  for (int64_t d : {64, 128}) {
    // The table as f32 values (what the kernel reads) and positions past the table.
    std::vector<double> table = kt::rope_table_f64(max_pos, d, 10000.0);
    std::vector<float> table_f(table.size());
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = table_f[i] = static_cast<float>(table[i]);
    auto cos_sin = DeviceBuffer::from_host<float>(table_f);
    std::vector<int32_t> pos(tokens);
    std::mt19937 rng(7);
    for (auto& p : pos) p = static_cast<int32_t>(rng() % 1000);
    auto positions = DeviceBuffer::from_host<int32_t>(pos);
    for (DType dt : {DType::kBF16, DType::kF32}) {
      Tensor q(tokens * hq * d, dt, 11), k(tokens * hk * d, dt, 12), qw(d, dt, 13), kw(d, dt, 14);
      Output q_out(tokens * hq * d, dt), k_out(tokens * hk * d, dt);
      for (RopeStyle style : {RopeStyle::kNeox, RopeStyle::kGptj}) {
        const auto ks = style == RopeStyle::kGptj ? kt::RopeStyle::kGptj : kt::RopeStyle::kNeox;
        const auto q_ref =
            kt::rmsnorm_rope_f64(q.values, qw.values, table, pos, tokens, hq, d, max_pos, ks, eps);
        const auto k_ref =
            kt::rmsnorm_rope_f64(k.values, kw.values, table, pos, tokens, hk, d, max_pos, ks, eps);
        for (bool graph : {false, true}) {
          if (graph) rt_->prepare_rmsnorm_rope(tokens, hq, hk, d, style, dt);
          q_out.poison();
          k_out.poison();
          run(graph, [&](Stream s) {
            rt_->rmsnorm_rope(q.ptr(), k.ptr(), qw.ptr(), kw.ptr(),
                              reinterpret_cast<const float*>(cos_sin.get()),
                              reinterpret_cast<const int32_t*>(positions.get()), q_out.ptr(), k_out.ptr(),
                              tokens, hq, hk, d, max_pos, eps, style, dt, s);
          });
          const std::string what = std::string(to_string(dt)) + " d=" + std::to_string(d) +
                                   (style == RopeStyle::kGptj ? " gptj" : " neox") + (graph ? " graph" : "");
          EXPECT_LE(error(q_out.read(), q_ref), tolerance(dt)) << what;
          EXPECT_LE(error(k_out.read(), k_ref), tolerance(dt)) << what;
        }
      }
    }
  }
}

TEST_F(RuntimeOpsGpu, SoftmaxWithEachMaskMatchesTheReference) {
  const float scale = 0.125f;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{5, 3001}, {3, 70001}}) {
    std::vector<int32_t> len(static_cast<std::size_t>(rows));
    std::mt19937 rng(5);
    for (auto& l : len) l = static_cast<int32_t>(rng() % static_cast<uint32_t>(cols + 1));
    len[0] = 0;  // a row with every column masked gives zeros
    auto lengths = DeviceBuffer::from_host<int32_t>(len);
    for (DType dt : kDtypes) {
      Tensor x(rows * cols, dt, 21, 0.25, 8.0);
      Output y(rows * cols, dt);
      for (SoftmaxMask mask : {SoftmaxMask::kNone, SoftmaxMask::kCausal, SoftmaxMask::kPadding}) {
        const auto km = mask == SoftmaxMask::kNone     ? kt::SoftmaxMask::kNone
                        : mask == SoftmaxMask::kCausal ? kt::SoftmaxMask::kCausal
                                                       : kt::SoftmaxMask::kPadding;
        const auto ref =
            kt::softmax_f64(x.values, rows, cols, scale, km, std::max<int64_t>(cols - rows, 0), len);
        for (bool graph : {false, true}) {
          if (graph) rt_->prepare_softmax(rows, cols, mask, dt);
          y.poison();
          run(graph, [&](Stream s) {
            rt_->softmax(x.ptr(), y.ptr(), reinterpret_cast<const int32_t*>(lengths.get()), rows, cols, scale,
                         mask, dt, s);
          });
          EXPECT_LE(error(y.read(), ref), tolerance(dt))
              << to_string(dt) << " " << rows << "x" << cols << " mask " << static_cast<int>(mask)
              << " graph=" << graph;
        }
      }
    }
  }
}

TEST_F(RuntimeOpsGpu, SwigluFusedAndSplitMatchTheReference) {
  const int64_t m = 9, inter = 1377;
  for (DType dt : kDtypes) {
    Tensor x(m * 2 * inter, dt, 31, 0.25, 4.0), gate(m * inter, dt, 32, 0.25, 4.0), up(m * inter, dt, 33);
    Output out(m * inter, dt);
    std::vector<double> g, u;
    kt::split_gate_up(x.values, m, inter, g, u);
    const auto fused_ref = kt::swiglu_f64(g, u);
    const auto split_ref = kt::swiglu_f64(gate.values, up.values);
    for (bool graph : {false, true}) {
      if (graph) {
        rt_->prepare_swiglu(m, inter, dt);
        rt_->prepare_swiglu(m, inter, dt, true);
      }
      out.poison();
      run(graph, [&](Stream s) { rt_->swiglu(x.ptr(), out.ptr(), m, inter, dt, s); });
      EXPECT_LE(error(out.read(), fused_ref), tolerance(dt)) << to_string(dt) << " fused graph=" << graph;
      out.poison();
      run(graph, [&](Stream s) { rt_->swiglu(gate.ptr(), up.ptr(), out.ptr(), m, inter, dt, s); });
      EXPECT_LE(error(out.read(), split_ref), tolerance(dt)) << to_string(dt) << " split graph=" << graph;
    }
  }
  EXPECT_GE(rt_->prepared_plans(), 6u);
}

// A tuned config that requires 16-byte aligned rows (the bulk-copy rmsnorm, sm_90) serves aligned
// calls; a call whose x is 2 bytes off falls back to the default config instead of failing, and
// both match the reference.
TEST(RuntimeOpsGpuTuned, MisalignedCallFallsBackFromARequiredAlignment) {
  KTUNE_SKIP_WITHOUT_GPU();
  const harness::DeviceInfo info = harness::query_device(0);
  const kt::KernelSpec& bulk = kt::find_spec("rmsnorm", "bulk");
  if (auto why = bulk.arch_rejection(info.arch())) GTEST_SKIP() << *why;
  const int64_t rows = 37, hidden = 1032;
  const DType dt = DType::kBF16;
  test::TempFile file("tuned.db", "");
  {
    auto db = cache::ConfigCache::open(file.path());
    const int64_t gpu = db.upsert_gpu(
        {info.name, info.cc_major, info.cc_minor, info.sm_count, static_cast<int64_t>(info.memory_bytes)});
    const int64_t run = db.begin_run({});
    const int64_t kid = db.upsert_kernel({"rmsnorm", kt::template_source_hash("rmsnorm")});
    const ktune::Config config{"bulk", {{"THREADS", 128}, {"STAGES", 3}, {"STEPS", 4}, {"WRITE", 1}}};
    const kt::Problem problem{{{"rows", rows}, {"hidden", hidden}}, ktune::DType::kBF16, ""};
    cache::Measurement m;
    m.shape = problem.shape_text();
    m.dtype = "bf16";
    m.config_name = bulk.canonical_name(problem, config);
    m.config_json = config.to_json().dump();
    m.stats = cache::Stats{3.5, 3.4, 3.6, 3.7, 0.05, 20};
    db.set_best(db.record(run, gpu, kid, {m}).front());
  }
  RuntimeOptions o;
  o.db_path = file.path();
  Runtime rt(o);
  const PlanInfo plan = rt.prepare_rmsnorm(rows, hidden, dt);
  EXPECT_EQ(plan.source, PlanInfo::Source::kTuned);
  EXPECT_NE(plan.config_name.find(".bulk."), std::string::npos) << plan.config_name;
  const float eps = 0.25f;
  // x_store holds one element more: x_store.ptr() + 2 bytes is a misaligned x with values[1..].
  Tensor x_store(rows * hidden + 1, dt, 11), w(hidden, dt, 12);
  const std::vector<double> x_values(x_store.values.begin() + 1, x_store.values.end());
  const auto want = kt::rmsnorm_f64(x_values, {}, w.values, rows, hidden, eps, hdt(dt));
  Tensor x(rows * hidden, dt, 13);
  const auto want_aligned = kt::rmsnorm_f64(x.values, {}, w.values, rows, hidden, eps, hdt(dt));
  Output y(rows * hidden, dt);
  rt.rmsnorm(x.ptr(), w.ptr(), y.ptr(), rows, hidden, eps, dt, nullptr);
  EXPECT_LE(error(y.read(), want_aligned.y), tolerance(dt)) << "aligned, tuned bulk config";
  y.poison();
  const void* misaligned = static_cast<const std::byte*>(x_store.ptr()) + 2;
  rt.rmsnorm(misaligned, w.ptr(), y.ptr(), rows, hidden, eps, dt, nullptr);
  EXPECT_LE(error(y.read(), want.y), tolerance(dt)) << "misaligned x: the default config";
  y.poison();
  rt.rmsnorm(x.ptr(), w.ptr(), y.ptr(), rows, hidden, eps, dt, nullptr);  // the tuned plan again
  EXPECT_LE(error(y.read(), want_aligned.y), tolerance(dt)) << "aligned again";
}

TEST_F(RuntimeOpsGpu, RefusesBadCallsBeforeLaunching) {
  DeviceBuffer buf(1 << 20);
  char* base = reinterpret_cast<char*>(buf.get());
  const auto* table = reinterpret_cast<const float*>(base);
  const auto* pos = reinterpret_cast<const int32_t*>(base + 4096);
  const DType bf = DType::kBF16;
  test::expect_bad_input([&] { rt_->rmsnorm(base, base + 2, base + 4096, 4, 0, 1e-6f, bf, nullptr); },
                         {"hidden=0"});
  test::expect_bad_input([&] { rt_->rmsnorm(base + 1, base, base + 4096, 4, 64, 1e-6f, bf, nullptr); },
                         {"rmsnorm", "x at", "not aligned"});
  test::expect_bad_input([&] { rt_->rmsnorm(base, base, base + 4096, 4, 64, 0.0f, bf, nullptr); }, {"eps"});
  test::expect_bad_input(
      [&] { rt_->rmsnorm(base, base, base + 4096, 4, 64, 1e-6f, DType::kFP8E4M3, nullptr); },
      {"rmsnorm", "fp8e4m3"});
  test::expect_bad_input(
      [&] {
        rt_->rmsnorm_rope(base, base, base, base, table, pos, base, base, 2, 4, 2, 96, 64, 1e-6f,
                          RopeStyle::kNeox, bf, nullptr);
      },
      {"rmsnorm_rope", "head_dim", "96"});
  test::expect_bad_input(
      [&] { rt_->softmax(base, base + 8192, nullptr, 4, 100, 1.0f, SoftmaxMask::kPadding, bf, nullptr); },
      {"softmax", "lengths", "null"});
  test::expect_bad_input([&] { rt_->swiglu(base, base, base + 8192, 70000, 8, bf, nullptr); },
                         {"swiglu", "65535"});
  test::expect_bad_input([&] { rt_->swiglu(base, nullptr, base + 8192, 4, 8, bf, nullptr); }, {"up is null"});
  // The first call of a key inside capture: a clear error naming the prepare call, no launch.
  const auto& d = harness::driver();
  CUstream s = nullptr;
  KTUNE_CU_CHECK(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  KTUNE_CU_CHECK(d.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  test::expect_bad_input(
      [&] {
        rt_->softmax(base, base + 8192, nullptr, 3, 77, 1.0f, SoftmaxMask::kCausal, bf,
                     reinterpret_cast<Stream>(s));
      },
      {"prepare_softmax"});
  CUgraph graph = nullptr;
  EXPECT_EQ(d.cuStreamEndCapture(s, &graph), CUDA_SUCCESS);
  if (graph != nullptr) d.cuGraphDestroy(graph);
  d.cuStreamDestroy(s);
}

}  // namespace
}  // namespace ktune::tuner
