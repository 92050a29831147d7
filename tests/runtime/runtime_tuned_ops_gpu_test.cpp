// Every operator tuned, then served: a small real sweep (through the CLI and its worker) of each
// kernel at one shape into one database, a ktune::Runtime opened on it, and for each operator the
// prepare call must report the tuned winner (PlanInfo::Source::kTuned) and the launch must match
// the float64 CPU reference. A runtime that knows the template hashes of only some operators
// serves the others from the default config (or throws): this test fails then.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "kernel_templates/decode_attention/decode_attention_f64.hpp"
#include "kernel_templates/fp8_gemm/reference_fp8_gemm.hpp"
#include "kernel_templates/gemm/reference_gemm.hpp"
#include "ktune/ktune.hpp"
#include "tests/runtime/runtime_ops_gpu_util.hpp"
#include "tests/tuner/gpu_test_util.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tests/tuner/test_util.hpp"

namespace ktune::runtime {
namespace {

namespace test = ::ktune::tuner::test;
namespace gpu_test = ::ktune::tuner::gpu_test;
namespace gpu_test = ::ktune::tuner::gpu_test;

using namespace ops_gpu_test;
namespace kt = kernel_templates;
using harness::DeviceBuffer;

/// One sweep: a kernel at one shape, its dtype and layout (empty: the kernel's first).
struct Sweep {
  const char* kernel;
  const char* shape;
  const char* dtype;
  const char* layout;
};

constexpr Sweep kSweeps[] = {
    {"gemm", "m=16,n=512,k=1024", "bf16", "nt"},
    {"rmsnorm", "rows=7,hidden=4096", "bf16", ""},
    {"rmsnorm_rope", "tokens=5,heads_q=8,heads_kv=2,head_dim=128", "bf16", "neox"},
    {"softmax", "rows=5,cols=3001", "bf16", ""},
    {"swiglu", "m=9,i=1376", "bf16", "fused"},
    {"decode_attention", "batch=2,heads_q=8,heads_kv=2,seq=1037,head_dim=128", "bf16", ""},
    {"fp8_gemm", "m=32,n=512,k=1024", "fp8e4m3", "nt"},
};

class RuntimeTunedOpsGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!gpu_test::no_device_reason().empty()) return;
    gpu_test::use_ktune_binary();
    db_ = new test::TempDir();
    for (const Sweep& s : kSweeps) {
      std::string cmd = std::string(std::getenv("KTUNE_BIN")) + " tune --kernel " + s.kernel + " --shape " +
                        s.shape + " --dtype " + s.dtype +
                        (s.layout[0] != '\0' ? std::string(" --layout ") + s.layout : std::string()) +
                        " --budget 6 --max-time-ms 50 --no-counters --db " + path() + " > /dev/null 2>&1";
      sweep_status_.push_back(std::system(cmd.c_str()));
      sweep_commands_.push_back(cmd);
    }
  }
  static void TearDownTestSuite() {
    delete db_;
    db_ = nullptr;
  }
  static std::string path() { return (*db_ / "every_op.db").string(); }

  void SetUp() override {
    KTUNE_SKIP_WITHOUT_GPU();
    for (std::size_t i = 0; i < sweep_status_.size(); ++i)
      ASSERT_EQ(sweep_status_[i], 0) << sweep_commands_[i];
    RuntimeOptions o;
    o.db_path = path();
    o.on_miss = MissPolicy::kError;  // a key the runtime cannot find is a failure, not a default
    rt_ = std::make_unique<Runtime>(o);
  }

  /// The plan must be the sweep's winner.
  static void expect_tuned(const PlanInfo& info, const char* op) {
    EXPECT_EQ(info.source, PlanInfo::Source::kTuned) << op << ": " << info.config_name;
    EXPECT_FALSE(info.tuned_shape.empty()) << op;
    EXPECT_GT(info.tuned_median_us, 0.0) << op;
  }

  static inline test::TempDir* db_ = nullptr;
  static inline std::vector<int> sweep_status_;
  static inline std::vector<std::string> sweep_commands_;
  std::unique_ptr<Runtime> rt_;
};

TEST_F(RuntimeTunedOpsGpu, GemmServesTheTunedWinner) {
  const int64_t m = 16, n = 512, k = 1024;
  Tensor a(m * k, DType::kBF16, 61, 0.25, 1.0), b(n * k, DType::kBF16, 62, 0.25, 1.0);
  Output c(m * n, DType::kBF16);
  const GemmArgs args{.a = a.ptr(), .b = b.ptr(), .c = c.ptr(), .m = m, .n = n, .k = k};
  expect_tuned(rt_->prepare(args), "gemm");
  const auto ref = kt::gemm_reference_f64(a.values, b.values, m, n, k, kt::GemmLayout::kNT);
  for (bool graph : {false, true}) {
    c.poison();
    run(graph, [&](Stream s) { rt_->gemm(args, s); });
    EXPECT_LE(error(c.read(), ref), tolerance(DType::kBF16)) << "graph=" << graph;
  }
}

TEST_F(RuntimeTunedOpsGpu, RmsNormServesTheTunedWinner) {
  const int64_t rows = 7, hidden = 4096;
  const float eps = 0.5f;
  Tensor x(rows * hidden, DType::kBF16, 63), w(hidden, DType::kBF16, 64);
  Output y(rows * hidden, DType::kBF16);
  const RmsNormArgs args{
      .x = x.ptr(), .w = w.ptr(), .y = y.ptr(), .rows = rows, .hidden = hidden, .eps = eps};
  expect_tuned(rt_->prepare(args), "rmsnorm");
  const auto ref = kt::rmsnorm_f64(x.values, {}, w.values, rows, hidden, eps, DType::kBF16);
  for (bool graph : {false, true}) {
    y.poison();
    run(graph, [&](Stream s) { rt_->rmsnorm(args, s); });
    EXPECT_LE(error(y.read(), ref.y), tolerance(DType::kBF16)) << "graph=" << graph;
  }
}

TEST_F(RuntimeTunedOpsGpu, RmsNormRopeServesTheTunedWinner) {
  const int64_t tokens = 5, hq = 8, hk = 2, d = 128, max_pos = 37;
  const float eps = 0.25f;
  std::vector<double> table = kt::rope_table_f64(max_pos, d, 10000.0);
  std::vector<float> table_f(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = table_f[i] = static_cast<float>(table[i]);
  auto cos_sin = DeviceBuffer::from_host<float>(table_f);
  const std::vector<int32_t> pos = {3, 36, 40, 0, 511};  // past the table: taken modulo max_pos
  auto positions = DeviceBuffer::from_host<int32_t>(pos);
  Tensor q(tokens * hq * d, DType::kBF16, 65), k(tokens * hk * d, DType::kBF16, 66), qw(d, DType::kBF16, 67),
      kw(d, DType::kBF16, 68);
  Output q_out(tokens * hq * d, DType::kBF16), k_out(tokens * hk * d, DType::kBF16);
  const RmsNormRopeArgs args{.q = q.ptr(),
                             .k = k.ptr(),
                             .q_weight = qw.ptr(),
                             .k_weight = kw.ptr(),
                             .cos_sin = reinterpret_cast<const float*>(cos_sin.get()),
                             .positions = reinterpret_cast<const int32_t*>(positions.get()),
                             .q_out = q_out.ptr(),
                             .k_out = k_out.ptr(),
                             .tokens = tokens,
                             .heads_q = hq,
                             .heads_kv = hk,
                             .head_dim = d,
                             .max_pos = max_pos,
                             .eps = eps};
  expect_tuned(rt_->prepare(args), "rmsnorm_rope");
  const auto style = kt::RopeStyle::kNeox;
  const auto q_ref =
      kt::rmsnorm_rope_f64(q.values, qw.values, table, pos, tokens, hq, d, max_pos, style, eps);
  const auto k_ref =
      kt::rmsnorm_rope_f64(k.values, kw.values, table, pos, tokens, hk, d, max_pos, style, eps);
  for (bool graph : {false, true}) {
    q_out.poison();
    k_out.poison();
    run(graph, [&](Stream s) { rt_->rmsnorm_rope(args, s); });
    EXPECT_LE(error(q_out.read(), q_ref), tolerance(DType::kBF16)) << "q graph=" << graph;
    EXPECT_LE(error(k_out.read(), k_ref), tolerance(DType::kBF16)) << "k graph=" << graph;
  }
}

TEST_F(RuntimeTunedOpsGpu, SoftmaxServesTheTunedWinner) {
  const int64_t rows = 5, cols = 3001;
  const float scale = 0.125f;
  Tensor x(rows * cols, DType::kBF16, 69, 0.25, 8.0);
  Output y(rows * cols, DType::kBF16);
  const SoftmaxArgs args{.x = x.ptr(), .y = y.ptr(), .rows = rows, .cols = cols, .scale = scale};
  expect_tuned(rt_->prepare(args), "softmax");
  const auto ref = kt::softmax_f64(x.values, rows, cols, scale, kt::SoftmaxMask::kNone, 0, {});
  for (bool graph : {false, true}) {
    y.poison();
    run(graph, [&](Stream s) { rt_->softmax(args, s); });
    EXPECT_LE(error(y.read(), ref), tolerance(DType::kBF16)) << "graph=" << graph;
  }
}

TEST_F(RuntimeTunedOpsGpu, SwigluServesTheTunedWinner) {
  const int64_t m = 9, inter = 1376;
  Tensor x(m * 2 * inter, DType::kBF16, 70, 0.25, 4.0);
  Output out(m * inter, DType::kBF16);
  const SwigluArgs args{.x = x.ptr(), .out = out.ptr(), .m = m, .i = inter};
  expect_tuned(rt_->prepare(args), "swiglu");
  std::vector<double> g, u;
  kt::split_gate_up(x.values, m, inter, g, u);
  const auto ref = kt::swiglu_f64(g, u);
  for (bool graph : {false, true}) {
    out.poison();
    run(graph, [&](Stream s) { rt_->swiglu(args, s); });
    EXPECT_LE(error(out.read(), ref), tolerance(DType::kBF16)) << "graph=" << graph;
  }
}

TEST_F(RuntimeTunedOpsGpu, DecodeAttentionServesTheTunedWinner) {
  const int64_t batch = 2, hq = 8, hk = 2, seq = 1037, d = 128;
  Tensor q(batch * hq * d, DType::kBF16, 71), k(batch * hk * seq * d, DType::kBF16, 72),
      v(batch * hk * seq * d, DType::kBF16, 73);
  Output o(batch * hq * d, DType::kBF16);
  const DecodeAttentionArgs args{.q = q.ptr(),
                                 .k = k.ptr(),
                                 .v = v.ptr(),
                                 .o = o.ptr(),
                                 .batch = batch,
                                 .heads_q = hq,
                                 .heads_kv = hk,
                                 .seq = seq,
                                 .head_dim = d};
  expect_tuned(rt_->prepare(args), "decode_attention");
  const kt::DecodeAttentionShape shape{batch, hq, hk, seq, seq, d};
  const auto ref = kt::decode_attention_f64(q.values, k.values, v.values, {}, shape, 1.0 / std::sqrt(128.0));
  for (bool graph : {false, true}) {
    o.poison();
    run(graph, [&](Stream s) { rt_->decode_attention(args, s); });
    EXPECT_LE(error(o.read(), ref), tolerance(DType::kBF16)) << "graph=" << graph;
  }
}

TEST_F(RuntimeTunedOpsGpu, Fp8GemmServesTheTunedWinner) {
  const int64_t m = 32, n = 512, k = 1024;
  const harness::DeviceInfo info = harness::query_device(0);
  if (info.cc_major * 10 + info.cc_minor < 89)
    GTEST_SKIP() << "fp8_gemm needs sm_89; this GPU is " << info.arch();
  const auto a = random_e4m3(m * k, 74), b = random_e4m3(n * k, 75);
  auto da = DeviceBuffer::from_host<uint8_t>(a);
  auto db = DeviceBuffer::from_host<uint8_t>(b);
  const std::vector<float> sa = {0.75f}, sb = {1.25f};
  auto dsa = DeviceBuffer::from_host<float>(sa);
  auto dsb = DeviceBuffer::from_host<float>(sb);
  const std::vector<double> sa64(sa.begin(), sa.end()), sb64(sb.begin(), sb.end());
  const auto ref = kt::fp8_gemm_reference_f64(decoded(a), decoded(b), sa64, sb64, m, n, k, false);
  Output c(m * n, DType::kBF16);
  const Fp8GemmArgs args{.a = reinterpret_cast<const void*>(da.get()),
                         .b = reinterpret_cast<const void*>(db.get()),
                         .a_scale = reinterpret_cast<const float*>(dsa.get()),
                         .b_scale = reinterpret_cast<const float*>(dsb.get()),
                         .c = c.ptr(),
                         .m = m,
                         .n = n,
                         .k = k};
  expect_tuned(rt_->prepare(args), "fp8_gemm");
  for (bool graph : {false, true}) {
    c.poison();
    run(graph, [&](Stream s) { rt_->fp8_gemm(args, s); });
    EXPECT_LE(error(c.read(), ref), tolerance(DType::kBF16)) << "graph=" << graph;
  }
}

}  // namespace
}  // namespace ktune::runtime
