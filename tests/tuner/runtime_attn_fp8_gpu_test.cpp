// ktune::Runtime's decode_attention (GQA, split-KV, a cache larger than the context, per-sequence
// lengths, the default and an explicit scale) and fp8_gemm (per-tensor and per-row/column scales)
// on a GPU against the float64 CPU references at odd sizes, also replayed from a captured CUDA
// graph; then the D8 refusals of both.

#include <gtest/gtest.h>

#include "harness/device_buffer.hpp"
#include "core/dtype.hpp"
#include "kernel_templates/decode_attention/decode_attention_f64.hpp"
#include "kernel_templates/fp8_gemm/reference_fp8_gemm.hpp"
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
          const PlanInfo info =
              rt_->prepare_decode_attention(batch, hq, hk, seq, seq_max, d, with_lens, DType::kBF16);
          o.poison();
          run(graph, [&](Stream st) {
            rt_->decode_attention(q.ptr(), k.ptr(), v.ptr(), o.ptr(), lp, batch, hq, hk, seq, seq_max, d,
                                  scale, DType::kBF16, st);
          });
          EXPECT_LE(error(o.read(), ref), tolerance(DType::kBF16))
              << "d=" << d << " lens=" << with_lens << " scale=" << scale << " graph=" << graph << " "
              << info.config_name << " workspace " << info.workspace_bytes;
        }
      }
    }
  }
}

/// Random e4m3 bytes: never zero, never NaN (0x7F, 0xFF).
std::vector<uint8_t> random_e4m3(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) {
    do {
      b = static_cast<uint8_t>(rng());
    } while ((b & 0x7F) == 0 || (b & 0x7F) == 0x7F);
  }
  return out;
}

std::vector<double> decoded(const std::vector<uint8_t>& bytes) {
  std::vector<double> out(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) out[i] = ktune::decode_fp8e4m3(bytes[i]);
  return out;
}

TEST_F(RuntimeAttnFp8Gpu, Fp8GemmMatchesTheReferenceWithBothScalings) {
  const int64_t m = 37, n = 301, k = 512;
  try {
    rt_->prepare_fp8_gemm(m, n, k, Fp8Scaling::kPerTensor);
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
      const PlanInfo info = rt_->prepare_fp8_gemm(m, n, k, scaling);
      c.poison();
      run(graph, [&](Stream st) {
        rt_->fp8_gemm(reinterpret_cast<const void*>(da.get()), reinterpret_cast<const void*>(db.get()),
                      reinterpret_cast<const float*>(dsa.get()), reinterpret_cast<const float*>(dsb.get()),
                      c.ptr(), m, n, k, scaling, st);
      });
      EXPECT_LE(error(c.read(), ref), tolerance(DType::kBF16))
          << (rowcol ? "rowcol" : "per-tensor") << " graph=" << graph << " " << info.config_name;
    }
  }
}

TEST_F(RuntimeAttnFp8Gpu, RefusesBadCallsBeforeLaunching) {
  DeviceBuffer buf(1 << 22);
  char* base = reinterpret_cast<char*>(buf.get());
  const DType bf = DType::kBF16;
  test::expect_bad_input(
      [&] {
        rt_->decode_attention(base, base, base, base, nullptr, 1, 8, 2, 65, 64, 128, 0.0f, bf, nullptr);
      },
      {"decode_attention", "seq=65", "seq_max=64"});
  test::expect_bad_input(
      [&] {
        rt_->decode_attention(base, base, base, base, nullptr, 1, 8, 3, 64, 64, 128, 0.0f, bf, nullptr);
      },
      {"heads_q=8", "heads_kv=3"});
  test::expect_bad_input(
      [&] { rt_->decode_attention(base, base, base, base, nullptr, 1, 8, 2, 64, 64, 96, 0.0f, bf, nullptr); },
      {"decode_attention", "head_dim"});
  test::expect_bad_input(
      [&] {
        rt_->decode_attention(base, base + 2, base, base, nullptr, 1, 8, 2, 64, 64, 128, 0.0f, bf, nullptr);
      },
      {"decode_attention", "k aligned to 16"});
  test::expect_bad_input(
      [&] {
        rt_->decode_attention(base, base, base, base, nullptr, 1, 8, 2, 64, 64, 128, 0.0f, DType::kF32,
                              nullptr);
      },
      {"decode_attention", "f32"});
  const auto* scale = reinterpret_cast<const float*>(base + 8192);
  test::expect_bad_input(
      [&] {
        rt_->fp8_gemm(base, base, scale, scale, base + 4096, 16, 64, 100, Fp8Scaling::kPerTensor, nullptr);
      },
      {"fp8_gemm", "100"});
  test::expect_bad_input(
      [&] {
        rt_->fp8_gemm(base, base, nullptr, scale, base + 4096, 16, 64, 128, Fp8Scaling::kRowCol, nullptr);
      },
      {"a_scale is null"});
  // The first call of a key inside capture names its prepare call.
  const auto& d = harness::driver();
  CUstream s = nullptr;
  KTUNE_CU_CHECK(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  KTUNE_CU_CHECK(d.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  test::expect_bad_input(
      [&] {
        rt_->decode_attention(base, base, base, base, nullptr, 1, 8, 2, 33, 64, 64, 0.0f, bf,
                              reinterpret_cast<Stream>(s));
      },
      {"prepare_decode_attention"});
  CUgraph graph = nullptr;
  EXPECT_EQ(d.cuStreamEndCapture(s, &graph), CUDA_SUCCESS);
  if (graph != nullptr) d.cuGraphDestroy(graph);
  d.cuStreamDestroy(s);
}

}  // namespace
}  // namespace ktune::tuner
