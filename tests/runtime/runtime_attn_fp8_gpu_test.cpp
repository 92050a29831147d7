// ktune::Runtime's decode_attention (GQA, split-KV, a cache larger than the context, per-sequence
// lengths, the default and an explicit scale) and fp8_gemm (per-tensor and per-row/column scales)
// on a GPU against the float64 CPU references at odd sizes, also replayed from a captured CUDA
// graph; then the D8 refusals of both.

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "core/dtype.hpp"
#include "harness/device_buffer.hpp"
#include "kernel_templates/decode_attention/decode_attention_f64.hpp"
#include "kernel_templates/fp8_gemm/reference_fp8_gemm.hpp"
#include "ktune/ktune.hpp"
#include "tests/runtime/runtime_ops_gpu_util.hpp"
#include "tests/tuner/gpu_test_util.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tests/tuner/test_util.hpp"

namespace ktune::runtime {
namespace {

namespace test = ::ktune::tuner::test;
namespace gpu_test = ::ktune::tuner::gpu_test;

using namespace ops_gpu_test;
namespace kt = kernel_templates;
using harness::DeviceBuffer;

/// `args` with `change` applied: the call a refusal is checked on.
template <typename Args, typename Change>
Args with(Args args, Change change) {
  change(args);
  return args;
}

class RuntimeAttnFp8Gpu : public ::testing::Test {
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

TEST_F(RuntimeAttnFp8Gpu, DecodeAttentionMatchesTheReference) {
  const int64_t batch = 3, hq = 28, hk = 4, seq = 1037, seq_max = 1100;  // group 7; cache past the context
  for (int64_t d : {64, 128}) {
    Tensor q(batch * hq * d, DType::kBF16, 41), k(batch * hk * seq_max * d, DType::kBF16, 42),
        v(batch * hk * seq_max * d, DType::kBF16, 43);
    Output o(batch * hq * d, DType::kBF16);
    const std::vector<int32_t> lens = {0, 517, 1037};  // an empty context gives zeros
    auto dlens = DeviceBuffer::from_host<int32_t>(lens);
    const kt::DecodeAttentionShape shape{batch, hq, hk, seq, seq_max, d};
    for (bool with_lens : {false, true}) {
      for (float scale : {0.0f, 0.05f}) {
        const double s = scale != 0.0f ? scale : 1.0 / std::sqrt(static_cast<double>(d));
        const auto ref = kt::decode_attention_f64(
            q.values, k.values, v.values,
            with_lens ? std::span<const int32_t>(lens) : std::span<const int32_t>(), shape, s);
        const auto* lp = with_lens ? reinterpret_cast<const int32_t*>(dlens.get()) : nullptr;
        for (bool graph : {false, true}) {
          const DecodeAttentionArgs args{.q = q.ptr(),
                                         .k = k.ptr(),
                                         .v = v.ptr(),
                                         .o = o.ptr(),
                                         .context_lens = lp,
                                         .batch = batch,
                                         .heads_q = hq,
                                         .heads_kv = hk,
                                         .seq = seq,
                                         .seq_max = seq_max,
                                         .head_dim = d,
                                         .scale = scale};
          const PlanInfo info = rt_->prepare(args);
          o.poison();
          run(graph, [&](Stream st) { rt_->decode_attention(args, st); });
          EXPECT_LE(error(o.read(), ref), tolerance(DType::kBF16))
              << "d=" << d << " lens=" << with_lens << " scale=" << scale << " graph=" << graph << " "
              << info.config_name << " workspace " << info.workspace_bytes;
        }
      }
    }
  }
}

// A paged cache: blocks of 16 and 64 keys of every sequence shuffled through one pool (plus a
// block no table names), against the float64 reference over the cache gathered back from the
// table here; then the refusals of a bad geometry.
TEST_F(RuntimeAttnFp8Gpu, PagedDecodeAttentionMatchesTheGatheredCache) {
  const int64_t batch = 3, hq = 14, hk = 2, seq = 1037;  // Qwen2.5's group of 7
  for (int64_t d : {64, 128}) {
    for (int64_t block : {16, 64}) {
      const int64_t max_blocks = (seq + block - 1) / block, num_blocks = batch * max_blocks + 1;
      Tensor q(batch * hq * d, DType::kBF16, 51), k(num_blocks * hk * block * d, DType::kBF16, 52),
          v(num_blocks * hk * block * d, DType::kBF16, 53);
      Output o(batch * hq * d, DType::kBF16);
      std::vector<int32_t> table(batch * max_blocks);
      std::iota(table.begin(), table.end(), 1);
      std::shuffle(table.begin(), table.end(), std::mt19937(54));
      auto dtable = DeviceBuffer::from_host<int32_t>(table);
      const int64_t cap = max_blocks * block;
      std::vector<double> kc(batch * hk * cap * d), vc(kc.size());
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < hk; ++h)
          for (int64_t t = 0; t < cap; ++t)
            for (int64_t i = 0; i < d; ++i) {
              const int64_t from = ((table[b * max_blocks + t / block] * hk + h) * block + t % block) * d + i;
              kc[((b * hk + h) * cap + t) * d + i] = k.values[from];
              vc[((b * hk + h) * cap + t) * d + i] = v.values[from];
            }
      const std::vector<int32_t> lens = {1, 600, 1037};
      auto dlens = DeviceBuffer::from_host<int32_t>(lens);
      const auto ref = kt::decode_attention_f64(q.values, kc, vc, lens, {batch, hq, hk, seq, cap, d},
                                                1.0 / std::sqrt(static_cast<double>(d)));
      for (bool graph : {false, true}) {
        const DecodeAttentionArgs args{.q = q.ptr(),
                                       .k = k.ptr(),
                                       .v = v.ptr(),
                                       .o = o.ptr(),
                                       .context_lens = reinterpret_cast<const int32_t*>(dlens.get()),
                                       .batch = batch,
                                       .heads_q = hq,
                                       .heads_kv = hk,
                                       .seq = seq,
                                       .head_dim = d,
                                       .block_table = reinterpret_cast<const int32_t*>(dtable.get()),
                                       .block_size = block,
                                       .max_blocks = max_blocks,
                                       .num_blocks = num_blocks};
        const PlanInfo info = rt_->prepare(args);
        o.poison();
        run(graph, [&](Stream st) { rt_->decode_attention(args, st); });
        EXPECT_LE(error(o.read(), ref), tolerance(DType::kBF16))
            << "d=" << d << " block=" << block << " graph=" << graph << " " << info.config_name;
        if (d == 64 && block == 16 && !graph) {
          test::expect_bad_input(
              [&] { rt_->decode_attention(with(args, [](auto& a) { a.block_size = 24; }), nullptr); },
              {"decode_attention", "block_size=24", "multiple of 16"});
          test::expect_bad_input(
              [&] { rt_->decode_attention(with(args, [](auto& a) { a.max_blocks = 2; }), nullptr); },
              {"decode_attention", "max_blocks=2"});
          test::expect_bad_input(
              [&] { rt_->decode_attention(with(args, [](auto& a) { a.num_blocks = 0; }), nullptr); },
              {"decode_attention", "num_blocks"});
        }
      }
    }
  }
}

// The decode loop's way: one plan keyed on the cache (seq = seq_max) with per-sequence lengths in
// device memory, captured into a graph once and replayed at every step while the lengths grow;
// the call passes its own workspace (what a second stream running the same key would do).
TEST_F(RuntimeAttnFp8Gpu, OneGraphServesADecodeLoopOverGrowingContexts) {
  const int64_t batch = 2, hq = 16, hk = 4, seq_max = 700, d = 128;
  Tensor q(batch * hq * d, DType::kBF16, 44), k(batch * hk * seq_max * d, DType::kBF16, 45),
      v(batch * hk * seq_max * d, DType::kBF16, 46);
  Output o(batch * hq * d, DType::kBF16);
  DeviceBuffer dlens(batch * sizeof(int32_t));
  DecodeAttentionArgs args{.q = q.ptr(),
                           .k = k.ptr(),
                           .v = v.ptr(),
                           .o = o.ptr(),
                           .context_lens = reinterpret_cast<const int32_t*>(dlens.get()),
                           .batch = batch,
                           .heads_q = hq,
                           .heads_kv = hk,
                           .seq = seq_max,
                           .head_dim = d};
  const PlanInfo info = rt_->prepare(args);
  DeviceBuffer workspace(std::max<std::size_t>(info.workspace_bytes, 256));
  args.workspace = {reinterpret_cast<void*>(workspace.get()), info.workspace_bytes};
  const auto& drv = harness::driver();
  CUstream s = nullptr;
  KTUNE_CU_CHECK(drv.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  KTUNE_CU_CHECK(drv.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  rt_->decode_attention(args, reinterpret_cast<Stream>(s));
  CUgraph graph = nullptr;
  KTUNE_CU_CHECK(drv.cuStreamEndCapture(s, &graph));
  CUgraphExec exec = nullptr;
  KTUNE_CU_CHECK(drv.cuGraphInstantiateWithFlags(&exec, graph, 0));
  const kt::DecodeAttentionShape shape{batch, hq, hk, seq_max, seq_max, d};
  for (int32_t step : {1, 2, 63, 64, 65, 399, 700}) {
    const std::vector<int32_t> lens = {step, std::max(1, step / 3)};
    dlens.upload(lens.data(), lens.size() * sizeof(int32_t));
    o.poison();
    KTUNE_CU_CHECK(drv.cuGraphLaunch(exec, s));
    KTUNE_CU_CHECK(drv.cuStreamSynchronize(s));
    const auto ref =
        kt::decode_attention_f64(q.values, k.values, v.values, lens, shape, 1.0 / std::sqrt(128.0));
    EXPECT_LE(error(o.read(), ref), tolerance(DType::kBF16)) << "step " << step << " " << info.config_name;
  }
  KTUNE_CU_CHECK(drv.cuGraphExecDestroy(exec));
  KTUNE_CU_CHECK(drv.cuGraphDestroy(graph));
  KTUNE_CU_CHECK(drv.cuStreamDestroy(s));
  EXPECT_EQ(rt_->prepared_plans(), 1u) << "every step must reuse the one plan";
}

TEST_F(RuntimeAttnFp8Gpu, Fp8GemmMatchesTheReferenceWithBothScalings) {
  const int64_t m = 37, n = 301, k = 512;
  try {
    rt_->prepare(Fp8GemmArgs{.m = m, .n = n, .k = k});
  } catch (const Error& e) {
    if (std::string(e.what()).find("sm_89") != std::string::npos) GTEST_SKIP() << e.what();
    throw;
  }
  const auto a = random_e4m3(m * k, 51), b = random_e4m3(n * k, 52);
  auto da = DeviceBuffer::from_host<uint8_t>(a);
  auto db = DeviceBuffer::from_host<uint8_t>(b);
  Output c(m * n, DType::kBF16);
  std::mt19937 rng(53);
  std::uniform_real_distribution<float> mag(0.5f, 2.0f);
  for (Fp8Scaling scaling : {Fp8Scaling::kPerTensor, Fp8Scaling::kRowCol}) {
    const bool rowcol = scaling == Fp8Scaling::kRowCol;
    std::vector<float> sa(rowcol ? m : 1), sb(rowcol ? n : 1);
    for (auto& x : sa) x = mag(rng);
    for (auto& x : sb) x = mag(rng);
    auto dsa = DeviceBuffer::from_host<float>(sa);
    auto dsb = DeviceBuffer::from_host<float>(sb);
    const std::vector<double> sa64(sa.begin(), sa.end()), sb64(sb.begin(), sb.end());
    const auto ref = kt::fp8_gemm_reference_f64(decoded(a), decoded(b), sa64, sb64, m, n, k, rowcol);
    for (bool graph : {false, true}) {
      const Fp8GemmArgs args{.a = reinterpret_cast<const void*>(da.get()),
                             .b = reinterpret_cast<const void*>(db.get()),
                             .a_scale = reinterpret_cast<const float*>(dsa.get()),
                             .b_scale = reinterpret_cast<const float*>(dsb.get()),
                             .c = c.ptr(),
                             .m = m,
                             .n = n,
                             .k = k,
                             .scaling = scaling};
      const PlanInfo info = rt_->prepare(args);
      c.poison();
      run(graph, [&](Stream st) { rt_->fp8_gemm(args, st); });
      EXPECT_LE(error(c.read(), ref), tolerance(DType::kBF16))
          << (rowcol ? "rowcol" : "per-tensor") << " graph=" << graph << " " << info.config_name;
    }
  }
}

TEST_F(RuntimeAttnFp8Gpu, RefusesBadCallsBeforeLaunching) {
  DeviceBuffer buf(1 << 22);
  char* base = reinterpret_cast<char*>(buf.get());
  const DType bf = DType::kBF16;
  const DecodeAttentionArgs attn{.q = base,
                                 .k = base,
                                 .v = base,
                                 .o = base,
                                 .batch = 1,
                                 .heads_q = 8,
                                 .heads_kv = 2,
                                 .seq = 64,
                                 .seq_max = 64,
                                 .head_dim = 128,
                                 .dtype = bf};
  test::expect_bad_input([&] { rt_->decode_attention(with(attn, [](auto& a) { a.seq = 65; }), nullptr); },
                         {"decode_attention", "seq=65", "seq_max=64"});
  test::expect_bad_input([&] { rt_->decode_attention(with(attn, [](auto& a) { a.heads_kv = 3; }), nullptr); },
                         {"heads_q=8", "heads_kv=3"});
  test::expect_bad_input(
      [&] { rt_->decode_attention(with(attn, [](auto& a) { a.head_dim = 96; }), nullptr); },
      {"decode_attention", "head_dim"});
  test::expect_bad_input(
      [&] { rt_->decode_attention(with(attn, [&](auto& a) { a.k = base + 2; }), nullptr); },
      {"decode_attention", "k aligned to 16"});
  test::expect_bad_input(
      [&] { rt_->decode_attention(with(attn, [](auto& a) { a.dtype = DType::kF32; }), nullptr); },
      {"decode_attention", "f32"});
  const auto* scale = reinterpret_cast<const float*>(base + 8192);
  const Fp8GemmArgs fp8{
      .a = base, .b = base, .a_scale = scale, .b_scale = scale, .c = base + 4096, .m = 16, .n = 64, .k = 128};
  test::expect_bad_input([&] { rt_->fp8_gemm(with(fp8, [](auto& a) { a.k = 100; }), nullptr); },
                         {"fp8_gemm", "100"});
  test::expect_bad_input(
      [&] {
        rt_->fp8_gemm(with(fp8,
                           [](auto& a) {
                             a.a_scale = nullptr;
                             a.scaling = Fp8Scaling::kRowCol;
                           }),
                      nullptr);
      },
      {"a_scale is null"});
  // The first call of a key inside capture names its prepare call.
  const auto& d = harness::driver();
  CUstream s = nullptr;
  KTUNE_CU_CHECK(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  KTUNE_CU_CHECK(d.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  test::expect_bad_input(
      [&] {
        rt_->decode_attention(with(attn,
                                   [](auto& a) {
                                     a.seq = 33;
                                     a.head_dim = 64;
                                   }),
                              reinterpret_cast<Stream>(s));
      },
      {"Runtime::prepare"});
  CUgraph graph = nullptr;
  EXPECT_EQ(d.cuStreamEndCapture(s, &graph), CUDA_SUCCESS);
  if (graph != nullptr) d.cuGraphDestroy(graph);
  d.cuStreamDestroy(s);
}

}  // namespace
}  // namespace ktune::runtime
