// ktune::Runtime's operators on a GPU: rmsnorm (plain and residual), rmsnorm_rope (NeoX, GPT-J), rope_append
// (contiguous and paged caches),
// softmax (no mask, causal, padding), swiglu (fused, split) against the float64 CPU references at
// odd sizes on random non-zero data, each also replayed from a captured CUDA graph; the caller's
// eps, scale and max_pos differ from the specs' constants, so a runtime that dropped them fails.
// Then a tuned config with a required alignment and a misaligned call (the fallback), and the D8
// refusals that need a device.

#include <gtest/gtest.h>

#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "cache/config_cache.hpp"
#include "core/dtype.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "kernel_templates/gemm/reference_gemm.hpp"
#include "kernel_templates/reference_ops.hpp"
#include "kernel_templates/rope_append/rope_append_f64.hpp"
#include "kernel_templates/spec_registry.hpp"
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
        rt_->prepare(RmsNormArgs{.rows = rows, .hidden = hidden, .dtype = dt});
        rt_->prepare(RmsNormArgs{.residual = res.ptr(), .rows = rows, .hidden = hidden, .dtype = dt});
      }
      y.poison();
      run(graph, [&](Stream s) {
        rt_->rmsnorm({.x = x.ptr(),
                      .w = w.ptr(),
                      .y = y.ptr(),
                      .rows = rows,
                      .hidden = hidden,
                      .eps = eps,
                      .dtype = dt},
                     s);
      });
      EXPECT_LE(error(y.read(), plain.y), tolerance(dt)) << to_string(dt) << " graph=" << graph;
      y.poison();
      res_out.poison();
      run(graph, [&](Stream s) {
        rt_->rmsnorm({.x = x.ptr(),
                      .residual = res.ptr(),
                      .w = w.ptr(),
                      .y = y.ptr(),
                      .residual_out = res_out.ptr(),
                      .rows = rows,
                      .hidden = hidden,
                      .eps = eps,
                      .dtype = dt},
                     s);
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
                                     .eps = eps,
                                     .style = style,
                                     .dtype = dt};
          if (graph) rt_->prepare(args);
          q_out.poison();
          k_out.poison();
          run(graph, [&](Stream s) { rt_->rmsnorm_rope(args, s); });
          const std::string what = std::string(to_string(dt)) + " d=" + std::to_string(d) +
                                   (style == RopeStyle::kGptj ? " gptj" : " neox") + (graph ? " graph" : "");
          EXPECT_LE(error(q_out.read(), q_ref), tolerance(dt)) << what;
          EXPECT_LE(error(k_out.read(), k_ref), tolerance(dt)) << what;
        }
      }
    }
  }
}

/// The cache after a rope_append call, read back as doubles.
std::vector<double> read_cache(const Tensor& cache) {
  const auto bytes =
      cache.device.download_as<std::byte>(cache.values.size() * ktune::size_of(hdt(cache.dtype)));
  return ktune::decode(hdt(cache.dtype), bytes);
}

// Decode (a token a sequence at scattered positions, past seq_max: a ring) and prefill (one
// sequence of 20 tokens) into a contiguous cache and a paged one (blocks of 16, a shuffled table,
// one block id out of range), both pairings, with and without the q/k RMSNorm, full and partial
// rotary; the caches start random, so rows a call must not touch are checked too.
TEST_F(RuntimeOpsGpu, RopeAppendContiguousAndPagedMatchTheReference) {
  struct Case {
    int64_t tokens, seq_tokens, hq, hk, d, rot;
    bool norm, paged;
    RopeStyle style;
  };
  const Case cases[] = {
      {4, 1, 14, 2, 64, 64, false, false, RopeStyle::kNeox},    // Qwen2.5 decode, batch 4
      {20, 20, 14, 2, 64, 64, false, true, RopeStyle::kNeox},   // prefill into pages
      {3, 1, 16, 8, 128, 128, true, true, RopeStyle::kNeox},    // Qwen3 decode, paged
      {20, 20, 4, 2, 128, 64, false, false, RopeStyle::kGptj},  // GLM-4: partial, interleaved
      {5, 1, 4, 1, 128, 64, true, false, RopeStyle::kGptj},
  };
  const int64_t max_pos = 37, seq_max = 50, block = 16, max_blocks = 4;
  for (const Case& c : cases) {
    const int64_t sequences = c.tokens / c.seq_tokens;
    const int64_t num_blocks = c.paged ? sequences * max_blocks + 1 : 0;
    std::vector<double> table = kt::rope_table_f64(max_pos, c.rot, 10000.0);
    std::vector<float> table_f(table.size());
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = table_f[i] = static_cast<float>(table[i]);
    auto cos_sin = DeviceBuffer::from_host<float>(table_f);
    std::vector<int32_t> pos(static_cast<std::size_t>(c.tokens));
    std::mt19937 rng(static_cast<uint32_t>(c.tokens * 31 + c.d));
    for (int64_t t = 0; t < c.tokens; ++t) {
      // Prefill: consecutive positions from 3; decode: anywhere (a position per sequence).
      pos[t] = c.seq_tokens > 1 ? static_cast<int32_t>(3 + t) : static_cast<int32_t>(rng() % 60);
    }
    auto positions = DeviceBuffer::from_host<int32_t>(pos);
    std::vector<int32_t> blocks;
    if (c.paged) {
      for (int64_t i = 0; i < sequences * max_blocks; ++i) blocks.push_back(static_cast<int32_t>(i));
      std::shuffle(blocks.begin(), blocks.end(), rng);
      blocks[1] = static_cast<int32_t>(num_blocks + 5);  // sequence 0, positions 16..31: write nothing
    }
    auto block_table = DeviceBuffer::from_host<int32_t>(blocks.empty() ? std::vector<int32_t>{0} : blocks);
    const kt::KvCacheGeometry geometry{c.seq_tokens, c.paged ? block : seq_max, c.paged,
                                       c.paged ? max_blocks : 1, c.paged ? num_blocks : 1};
    const int64_t cache_elems = (c.paged ? num_blocks : sequences) * c.hk * geometry.cache_rows * c.d;
    for (DType dt : {DType::kBF16, DType::kF32}) {
      Tensor q(c.tokens * c.hq * c.d, dt, 11), k(c.tokens * c.hk * c.d, dt, 12),
          v(c.tokens * c.hk * c.d, dt, 13);
      Tensor qw(c.d, dt, 14), kw(c.d, dt, 15);
      const Tensor cache0(cache_elems, dt, 16);
      kt::RopeAppendInputs in;
      in.q = q.values, in.k = k.values, in.v = v.values;
      if (c.norm) in.q_weight = qw.values, in.k_weight = kw.values;
      in.cos_sin = table, in.positions = pos, in.block_table = blocks;
      in.tokens = c.tokens, in.heads_q = c.hq, in.heads_kv = c.hk, in.head_dim = c.d, in.rot_dim = c.rot;
      in.style = c.style == RopeStyle::kGptj ? kt::RopeStyle::kGptj : kt::RopeStyle::kNeox;
      in.eps = 0.25;
      std::vector<double> k_ref = cache0.values, v_ref = cache0.values;
      const auto q_ref = kt::rope_append_f64(in, geometry, k_ref, v_ref);
      for (bool graph : {false, true}) {
        Tensor k_cache(cache_elems, dt, 16), v_cache(cache_elems, dt, 16);  // cache0's values
        Output q_out(c.tokens * c.hq * c.d, dt);
        const RopeAppendArgs args{
            .q = q.ptr(),
            .k = k.ptr(),
            .v = v.ptr(),
            .q_weight = c.norm ? qw.ptr() : nullptr,
            .k_weight = c.norm ? kw.ptr() : nullptr,
            .cos_sin = reinterpret_cast<const float*>(cos_sin.get()),
            .positions = reinterpret_cast<const int32_t*>(positions.get()),
            .block_table = c.paged ? reinterpret_cast<const int32_t*>(block_table.get()) : nullptr,
            .q_out = q_out.ptr(),
            .k_cache = k_cache.ptr(),
            .v_cache = v_cache.ptr(),
            .tokens = c.tokens,
            .heads_q = c.hq,
            .heads_kv = c.hk,
            .head_dim = c.d,
            .rot_dim = c.rot == c.d ? 0 : c.rot,
            .seq_tokens = c.seq_tokens,
            .cache_rows = geometry.cache_rows,
            .max_blocks = c.paged ? max_blocks : 0,
            .num_blocks = num_blocks,
            .max_pos = max_pos,
            .eps = 0.25f,
            .style = c.style,
            .dtype = dt};
        if (graph) rt_->prepare(args);
        run(graph, [&](Stream s) { rt_->rope_append(args, s); });
        const std::string what = std::string(to_string(dt)) + " tokens=" + std::to_string(c.tokens) +
                                 " d=" + std::to_string(c.d) + " rot=" + std::to_string(c.rot) +
                                 (c.norm ? " norm" : "") + (c.paged ? " paged" : "") +
                                 (graph ? " graph" : "");
        EXPECT_LE(error(q_out.read(), q_ref), tolerance(dt)) << what;
        EXPECT_LE(error(read_cache(k_cache), k_ref), tolerance(dt)) << what << " k cache";
        EXPECT_EQ(read_cache(v_cache), v_ref) << what << " v cache (a copy: exact)";
      }
    }
  }
  // The D8 refusals of its own arguments.
  alignas(16) static char buf[256];
  const RopeAppendArgs ok{.q = buf,
                          .k = buf,
                          .v = buf,
                          .cos_sin = reinterpret_cast<const float*>(buf),
                          .positions = reinterpret_cast<const int32_t*>(buf),
                          .q_out = buf,
                          .k_cache = buf,
                          .v_cache = buf,
                          .tokens = 1,
                          .heads_q = 2,
                          .heads_kv = 1,
                          .head_dim = 64,
                          .cache_rows = 8,
                          .max_pos = 4};
  RopeAppendArgs one_weight = ok;
  one_weight.q_weight = buf;
  test::expect_bad_input([&] { rt_->rope_append(one_weight, nullptr); }, {"rope_append", "k_weight"});
  RopeAppendArgs no_rows = ok;
  no_rows.cache_rows = 0;
  test::expect_bad_input([&] { rt_->rope_append(no_rows, nullptr); }, {"rope_append", "cache_rows=0"});
  RopeAppendArgs paged = ok;
  paged.block_table = reinterpret_cast<const int32_t*>(buf);
  test::expect_bad_input([&] { rt_->rope_append(paged, nullptr); }, {"rope_append", "max_blocks=0"});
  RopeAppendArgs odd = ok;
  odd.rot_dim = 40;
  test::expect_bad_input([&] { rt_->rope_append(odd, nullptr); }, {"rope_append", "rot_dim"});
  RopeAppendArgs no_v = ok;
  no_v.v = nullptr;
  test::expect_bad_input([&] { rt_->rope_append(no_v, nullptr); }, {"rope_append", "v is null"});
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
          const SoftmaxArgs args{.x = x.ptr(),
                                 .y = y.ptr(),
                                 .lengths = reinterpret_cast<const int32_t*>(lengths.get()),
                                 .rows = rows,
                                 .cols = cols,
                                 .scale = scale,
                                 .mask = mask,
                                 .dtype = dt};
          if (graph) rt_->prepare(args);
          y.poison();
          run(graph, [&](Stream s) { rt_->softmax(args, s); });
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
        rt_->prepare(SwigluArgs{.x = x.ptr(), .m = m, .i = inter, .dtype = dt});
        rt_->prepare(SwigluArgs{.m = m, .i = inter, .dtype = dt});
      }
      out.poison();
      run(graph, [&](Stream s) {
        rt_->swiglu({.x = x.ptr(), .out = out.ptr(), .m = m, .i = inter, .dtype = dt}, s);
      });
      EXPECT_LE(error(out.read(), fused_ref), tolerance(dt)) << to_string(dt) << " fused graph=" << graph;
      out.poison();
      run(graph, [&](Stream s) {
        rt_->swiglu({.gate = gate.ptr(), .up = up.ptr(), .out = out.ptr(), .m = m, .i = inter, .dtype = dt},
                    s);
      });
      EXPECT_LE(error(out.read(), split_ref), tolerance(dt)) << to_string(dt) << " split graph=" << graph;
    }
  }
  EXPECT_GE(rt_->prepared_plans(), 6u);
}

// gemm's fused epilogues (+bias, silu, both) in both B layouts, served by a template that has them
// (the default template has none), against the float64 GEMM with the epilogue applied in double.
TEST_F(RuntimeOpsGpu, GemmEpiloguesMatchTheReference) {
  const int64_t m = 37, n = 301, k = 515;
  for (DType dt : {DType::kBF16, DType::kF16}) {
    Tensor a(m * k, dt, 81, 0.25, 1.0), b(n * k, dt, 82, 0.25, 1.0), bias(n, dt, 83, 0.5, 4.0);
    Output c(m * n, dt);
    for (Layout layout : {Layout::kNT, Layout::kNN}) {
      const auto product = kt::gemm_reference_f64(
          a.values, b.values, m, n, k, layout == Layout::kNT ? kt::GemmLayout::kNT : kt::GemmLayout::kNN);
      for (Epilogue epi : {Epilogue::kBias, Epilogue::kSilu, Epilogue::kBiasSilu}) {
        std::vector<double> ref(product.size());
        for (std::size_t i = 0; i < ref.size(); ++i) {
          double x = product[i];
          if (epi != Epilogue::kSilu) x += bias.values[i % static_cast<std::size_t>(n)];
          if (epi != Epilogue::kBias) x = x / (1.0 + std::exp(-x));
          ref[i] = x;
        }
        const GemmArgs args{.a = a.ptr(),
                            .b = b.ptr(),
                            .c = c.ptr(),
                            .bias = bias.ptr(),
                            .m = m,
                            .n = n,
                            .k = k,
                            .dtype = dt,
                            .layout = layout,
                            .epilogue = epi};
        const PlanInfo info = rt_->prepare(args);
        for (bool graph : {false, true}) {
          c.poison();
          run(graph, [&](Stream s) { rt_->gemm(args, s); });
          EXPECT_LE(error(c.read(), ref), tolerance(dt))
              << to_string(dt) << " " << to_string(layout) << " epilogue " << static_cast<int>(epi)
              << " graph=" << graph << " " << info.config_name;
        }
      }
    }
  }
}

// One runtime, several threads at once, each on its own stream with its own tensors: the first
// calls of the keys race to build the plans (built once), then every thread launches rmsnorm and
// a causal softmax repeatedly; every answer is right.
TEST_F(RuntimeOpsGpu, ThreadsShareOneRuntimeOnTheirOwnStreams) {
  constexpr int kThreads = 4, kRounds = 25;
  const int64_t rows = 33, cols = 2049;
  const DType dt = DType::kBF16;
  const auto& d = harness::driver();
  CUcontext ctx = nullptr;
  KTUNE_CU_CHECK(d.cuCtxGetCurrent(&ctx));
  struct Work {
    std::unique_ptr<Tensor> x, w;
    std::unique_ptr<Output> y, p;
    std::vector<double> norm_ref, softmax_ref;
  };
  std::vector<Work> work(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    Work& wk = work[static_cast<std::size_t>(t)];
    wk.x = std::make_unique<Tensor>(rows * cols, dt, 100 + t);
    wk.w = std::make_unique<Tensor>(cols, dt, 200 + t);
    wk.y = std::make_unique<Output>(rows * cols, dt);
    wk.p = std::make_unique<Output>(rows * cols, dt);
    wk.norm_ref = kt::rmsnorm_f64(wk.x->values, {}, wk.w->values, rows, cols, 0.5, hdt(dt)).y;
    wk.softmax_ref =
        kt::softmax_f64(wk.x->values, rows, cols, 0.25, kt::SoftmaxMask::kCausal, cols - rows, {});
  }
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Work& wk = work[static_cast<std::size_t>(t)];
      try {
        KTUNE_CU_CHECK(d.cuCtxSetCurrent(ctx));
        CUstream s = nullptr;
        KTUNE_CU_CHECK(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        const RmsNormArgs norm{.x = wk.x->ptr(),
                               .w = wk.w->ptr(),
                               .y = wk.y->ptr(),
                               .rows = rows,
                               .hidden = cols,
                               .eps = 0.5f,
                               .dtype = dt};
        const SoftmaxArgs soft{.x = wk.x->ptr(),
                               .y = wk.p->ptr(),
                               .rows = rows,
                               .cols = cols,
                               .scale = 0.25f,
                               .mask = SoftmaxMask::kCausal,
                               .dtype = dt};
        for (int r = 0; r < kRounds; ++r) {
          rt_->rmsnorm(norm, reinterpret_cast<Stream>(s));
          rt_->softmax(soft, reinterpret_cast<Stream>(s));
        }
        KTUNE_CU_CHECK(d.cuStreamSynchronize(s));
        KTUNE_CU_CHECK(d.cuStreamDestroy(s));
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(t)] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    const Work& wk = work[static_cast<std::size_t>(t)];
    EXPECT_EQ(failures[static_cast<std::size_t>(t)], "") << "thread " << t;
    EXPECT_LE(error(wk.y->read(), wk.norm_ref), tolerance(dt)) << "rmsnorm, thread " << t;
    EXPECT_LE(error(wk.p->read(), wk.softmax_ref), tolerance(dt)) << "softmax, thread " << t;
  }
  EXPECT_EQ(rt_->prepared_plans(), 2u) << "each key is built once, whichever thread came first";
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
    m.dtype = DType::kBF16;
    m.config_name = bulk.canonical_name(problem, config);
    m.config_json = config.to_json().dump();
    m.stats = cache::Stats{3.5, 3.4, 3.6, 3.7, 0.05, 20};
    db.set_best(db.record(run, gpu, kid, {m}).front());
  }
  RuntimeOptions o;
  o.db_path = file.path();
  Runtime rt(o);
  const PlanInfo plan = rt.prepare(RmsNormArgs{.rows = rows, .hidden = hidden, .dtype = dt});
  EXPECT_EQ(plan.source, PlanInfo::Source::kTuned);
  EXPECT_NE(plan.config_name.find(".bulk."), std::string::npos) << plan.config_name;
  const float eps = 0.25f;
  // x_store holds one element more: x_store.ptr() + 2 bytes is a misaligned x with values[1..].
  Tensor x_store(rows * hidden + 1, dt, 11), w(hidden, dt, 12);
  auto norm = [&](const void* x_ptr, void* y_ptr) {
    rt.rmsnorm(
        {.x = x_ptr, .w = w.ptr(), .y = y_ptr, .rows = rows, .hidden = hidden, .eps = eps, .dtype = dt},
        nullptr);
  };
  const std::vector<double> x_values(x_store.values.begin() + 1, x_store.values.end());
  const auto want = kt::rmsnorm_f64(x_values, {}, w.values, rows, hidden, eps, hdt(dt));
  Tensor x(rows * hidden, dt, 13);
  const auto want_aligned = kt::rmsnorm_f64(x.values, {}, w.values, rows, hidden, eps, hdt(dt));
  Output y(rows * hidden, dt);
  norm(x.ptr(), y.ptr());
  EXPECT_LE(error(y.read(), want_aligned.y), tolerance(dt)) << "aligned, tuned bulk config";
  y.poison();
  const void* misaligned = static_cast<const std::byte*>(x_store.ptr()) + 2;
  norm(misaligned, y.ptr());
  EXPECT_LE(error(y.read(), want.y), tolerance(dt)) << "misaligned x: the default config";
  y.poison();
  norm(x.ptr(), y.ptr());  // the tuned plan again
  EXPECT_LE(error(y.read(), want_aligned.y), tolerance(dt)) << "aligned again";
}

TEST_F(RuntimeOpsGpu, RefusesBadCallsBeforeLaunching) {
  DeviceBuffer buf(1 << 20);
  char* base = reinterpret_cast<char*>(buf.get());
  const auto* table = reinterpret_cast<const float*>(base);
  const auto* pos = reinterpret_cast<const int32_t*>(base + 4096);
  const DType bf = DType::kBF16;
  const RmsNormArgs norm{.x = base, .w = base, .y = base + 4096, .rows = 4, .hidden = 64, .dtype = bf};
  auto with = [](auto args, auto change) {
    change(args);
    return args;
  };
  test::expect_bad_input([&] { rt_->rmsnorm(with(norm, [](auto& a) { a.hidden = 0; }), nullptr); },
                         {"hidden=0"});
  test::expect_bad_input([&] { rt_->rmsnorm(with(norm, [&](auto& a) { a.x = base + 1; }), nullptr); },
                         {"rmsnorm", "x at", "not aligned"});
  test::expect_bad_input([&] { rt_->rmsnorm(with(norm, [](auto& a) { a.eps = 0.0f; }), nullptr); }, {"eps"});
  test::expect_bad_input(
      [&] { rt_->rmsnorm(with(norm, [](auto& a) { a.dtype = DType::kFP8E4M3; }), nullptr); },
      {"rmsnorm", "fp8e4m3"});
  test::expect_bad_input([&] { rt_->rmsnorm(with(norm, [&](auto& a) { a.residual = base; }), nullptr); },
                         {"residual_out is null"});
  test::expect_bad_input(
      [&] {
        rt_->rmsnorm_rope({.q = base,
                           .k = base,
                           .q_weight = base,
                           .k_weight = base,
                           .cos_sin = table,
                           .positions = pos,
                           .q_out = base,
                           .k_out = base,
                           .tokens = 2,
                           .heads_q = 4,
                           .heads_kv = 2,
                           .head_dim = 96,
                           .max_pos = 64},
                          nullptr);
      },
      {"rmsnorm_rope", "head_dim", "96"});
  test::expect_bad_input(
      [&] {
        rt_->softmax({.x = base, .y = base + 8192, .rows = 4, .cols = 100, .mask = SoftmaxMask::kPadding},
                     nullptr);
      },
      {"softmax", "lengths", "null"});
  test::expect_bad_input([&] { rt_->swiglu({.x = base, .out = base + 8192, .m = 70000, .i = 8}, nullptr); },
                         {"swiglu", "65535"});
  test::expect_bad_input([&] { rt_->swiglu({.gate = base, .out = base + 8192, .m = 4, .i = 8}, nullptr); },
                         {"up is null"});
  test::expect_bad_input(
      [&] {
        rt_->swiglu({.x = base, .gate = base, .up = base, .out = base + 8192, .m = 4, .i = 8}, nullptr);
      },
      {"swiglu", "not both"});
  // The first call of a key inside capture: a clear error naming the prepare call, no launch.
  const auto& d = harness::driver();
  CUstream s = nullptr;
  KTUNE_CU_CHECK(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  KTUNE_CU_CHECK(d.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  test::expect_bad_input(
      [&] {
        rt_->softmax({.x = base, .y = base + 8192, .rows = 3, .cols = 77, .mask = SoftmaxMask::kCausal},
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
