// The operator templates' own source (rmsnorm, rmsnorm_rope, rope_append, softmax, swiglu and their GPU
// references), run on the CPU (a std::thread per CUDA thread, a std::barrier per __syncthreads and
// per shuffle) and compared with the CPU float64 references of kernel_templates/reference_ops.hpp:
// catches indexing, predication, tail, mask and reduction bugs on any machine before GPU time is
// spent. Odd sizes (scalar tails, misaligned rows), misaligned pointers, every mode, f32 and an
// emulated bf16. Outputs are poisoned with NaN first, so an element left unwritten fails.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernel_templates/reference_ops.hpp"
#include "kernel_templates/rope_append/rope_append_f64.hpp"
#include "ops_templates_emulated.hpp"

thread_local uint3e threadIdx;
thread_local uint3e blockIdx;
uint3e blockDim;
uint3e gridDim;
std::barrier<>* g_barrier = nullptr;
float g_shfl[1024];

using ktune::DType;

namespace {

namespace kt = ktune::kernel_templates;

void launch(uint3e grid, uint3e block, const std::function<void()>& body) {
  gridDim = grid;
  blockDim = block;
  const unsigned n = block.x * block.y * block.z;
  for (unsigned by = 0; by < grid.y; ++by) {
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      std::barrier<> barrier(n);
      g_barrier = &barrier;
      std::vector<std::thread> threads;
      for (unsigned t = 0; t < n; ++t) {
        threads.emplace_back([&, t] {
          blockIdx = {bx, by, 0};
          threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
          body();
        });
      }
      for (auto& t : threads) t.join();
    }
  }
}

unsigned cdiv(long long a, long long b) { return static_cast<unsigned>((a + b - 1) / b); }

/// Elements of T in a 16-byte-aligned buffer, optionally one element past the alignment.
template <class T>
struct Buf {
  std::vector<unsigned char> mem;
  T* p = nullptr;
  std::size_t n = 0;
  Buf(std::size_t count, bool misalign = false) : mem(count * sizeof(T) + 32), n(count) {
    auto addr = reinterpret_cast<uintptr_t>(mem.data());
    addr = (addr + 15) / 16 * 16 + (misalign ? sizeof(T) : 0);
    p = reinterpret_cast<T*>(addr);
    std::memset(p, 0xFF, count * sizeof(T));  // NaN in f32 and bf16
  }
  /// Random values, magnitude [0.25, 1), random sign; returns them as the kernel sees them.
  std::vector<double> randomize(unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> mag(0.25f, 1.0f);
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      p[i] = ktune_dev::from_f32<T>((rng() & 1 ? 1.0f : -1.0f) * mag(rng));
      out[i] = ktune_dev::to_f32(p[i]);
    }
    return out;
  }
  std::vector<double> values() const {
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = ktune_dev::to_f32(p[i]);
    return out;
  }
};

template <class T>
constexpr DType dtype_of() {
  return sizeof(T) == 4 ? DType::kF32 : DType::kBF16;
}

/// Every element within f32 rounding (f32) or one bf16 rounding plus that (bf16); no NaN left.
template <class T>
void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what,
                  double abs_floor = 1e-6) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double rel = sizeof(T) == 4 ? 2e-5 : 0.0079;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::fabs(got[i] - want[i]) <= rel * std::fabs(want[i]) + abs_floor)
        << what << " element " << i << ": " << got[i] << " vs " << want[i];
  }
}

// ---- rmsnorm -----------------------------------------------------------------------------------

template <int THREADS, int ROWS, int VEC, bool REG, bool RES, class T>
void rmsnorm_case(int rows, int hidden, bool misalign = false, bool in_place = false) {
  constexpr int kUnused = 0;
  (void)kUnused;
  Buf<T> x(std::size_t(rows) * hidden, misalign), r(std::size_t(rows) * hidden, misalign),
      w(hidden, misalign);
  Buf<T> y(std::size_t(rows) * hidden, misalign), ro(std::size_t(rows) * hidden, misalign);
  const auto xv = x.randomize(1u + rows), rv = r.randomize(2u + hidden), wv = w.randomize(3u);
  const auto want =
      kt::rmsnorm_f64(xv, RES ? rv : std::vector<double>{}, wv, rows, hidden, 1e-6f, dtype_of<T>());
  T* res_out = in_place ? r.p : ro.p;
  const int chunks = REG ? (hidden + THREADS * VEC - 1) / (THREADS * VEC) : 0;
  const std::string what = "rmsnorm t" + std::to_string(THREADS) + " r" + std::to_string(ROWS) + " v" +
                           std::to_string(VEC) + (REG ? " reg" : " twice") + (RES ? " residual " : " ") +
                           std::to_string(rows) + "x" + std::to_string(hidden) +
                           (misalign ? " misaligned" : "");
  launch({cdiv(rows, ROWS), 1, 1}, {THREADS * ROWS, 1, 1}, [&] {
    if (REG) {
      if (chunks == 1)
        ktune_rmsnorm<THREADS, ROWS, VEC, 1, RES, T>(x.p, r.p, w.p, y.p, res_out, rows, hidden, 1e-6f);
      if (chunks == 2)
        ktune_rmsnorm<THREADS, ROWS, VEC, 2, RES, T>(x.p, r.p, w.p, y.p, res_out, rows, hidden, 1e-6f);
      if (chunks == 3)
        ktune_rmsnorm<THREADS, ROWS, VEC, 3, RES, T>(x.p, r.p, w.p, y.p, res_out, rows, hidden, 1e-6f);
    } else {
      ktune_rmsnorm<THREADS, ROWS, VEC, 0, RES, T>(x.p, r.p, w.p, y.p, res_out, rows, hidden, 1e-6f);
    }
  });
  ASSERT_TRUE(!REG || (chunks >= 1 && chunks <= 3)) << what;
  expect_close<T>(y.values(), want.y, what);
  if (RES) {
    std::vector<double> got(std::size_t(rows) * hidden);
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = ktune_dev::to_f32(res_out[i]);
    expect_close<T>(got, want.residual_out, what + " residual_out", 0.0);
  }
}

TEST(OpsEmulation, RmsNormRegisterAndTwoPassOddSizes) {
  rmsnorm_case<32, 4, 8, true, false, bf16e>(5, 37);    // odd: rows alternate vector / element paths
  rmsnorm_case<64, 1, 8, true, false, bf16e>(2, 1000);  // 2 chunks, vector path, tail vector
  rmsnorm_case<32, 2, 4, false, false, float>(3, 301);  // two-pass loop, odd
  rmsnorm_case<64, 2, 4, true, false, float>(3, 256);   // round
  rmsnorm_case<32, 1, 1, false, false, bf16e>(1, 33);   // scalar vectors
  rmsnorm_case<32, 1, 4, true, false, float>(2, 300);   // 3 chunks: weights loaded after the reduction
}

TEST(OpsEmulation, RmsNormResidual) {
  rmsnorm_case<32, 2, 8, true, true, bf16e>(3, 72);
  rmsnorm_case<64, 1, 4, false, true, float>(2, 99);
  rmsnorm_case<32, 1, 8, false, true, bf16e>(2, 64, false, /*in_place=*/true);
  rmsnorm_case<32, 1, 8, true, true, bf16e>(2, 64, /*misalign=*/true);
}

TEST(OpsEmulation, RmsNormReferenceKernel) {
  for (bool res : {false, true}) {
    Buf<bf16e> x(5 * 37), r(5 * 37), w(37);
    const auto xv = x.randomize(7), rv = r.randomize(8), wv = w.randomize(9);
    std::vector<float> y_ref(5 * 37, NAN), r_ref(5 * 37, NAN);
    launch({2, 1, 1}, {128, 1, 1}, [&] {
      if (res) {
        ktune_rmsnorm_reference<bf16e, true>(x.p, r.p, w.p, y_ref.data(), r_ref.data(), 5, 37, 1e-6f);
      } else {
        ktune_rmsnorm_reference<bf16e, false>(x.p, r.p, w.p, y_ref.data(), r_ref.data(), 5, 37, 1e-6f);
      }
    });
    const auto want = kt::rmsnorm_f64(xv, res ? rv : std::vector<double>{}, wv, 5, 37, 1e-6f, DType::kBF16);
    expect_close<float>(std::vector<double>(y_ref.begin(), y_ref.end()), want.y, "rmsnorm reference");
  }
}

// ---- rmsnorm_rope ------------------------------------------------------------------------------

template <int D, int LANES, int VEC, int HEADS, bool GPTJ, class T, int ITEMS = 1, int OCC = 0>
void rope_case(int tokens, int hq, int hk, bool misalign = false) {
  const int max_pos = 7;
  Buf<T> q(std::size_t(tokens) * hq * D, misalign), k(std::size_t(tokens) * hk * D, misalign);
  Buf<T> qw(D, misalign), kw(D, misalign), qo(std::size_t(tokens) * hq * D, misalign),
      ko(std::size_t(tokens) * hk * D, misalign);
  const auto qv = q.randomize(11), kv = k.randomize(12), qwv = qw.randomize(13), kwv = kw.randomize(14);
  const auto table = kt::rope_table_f64(max_pos, D, 10000.0);
  std::vector<float> cs(table.begin(), table.end());
  std::vector<double> table32(cs.begin(), cs.end());
  std::vector<int32_t> pos(static_cast<std::size_t>(tokens));
  for (int t = 0; t < tokens; ++t) pos[std::size_t(t)] = (t % 3 == 2) ? -5 - t : 3 * t + 2;  // wraps too
  launch({cdiv((long long)tokens * (hq + hk), HEADS * ITEMS), 1, 1}, {LANES * HEADS, 1, 1}, [&] {
    ktune_rmsnorm_rope<D, LANES, VEC, HEADS, ITEMS, OCC, GPTJ, T>(q.p, k.p, qw.p, kw.p, cs.data(), pos.data(),
                                                                  qo.p, ko.p, tokens, hq, hk, max_pos, 1e-6f);
  });
  const auto style = GPTJ ? kt::RopeStyle::kGptj : kt::RopeStyle::kNeox;
  const std::string what = std::string("rope ") + (GPTJ ? "gptj" : "neox") + " lanes " +
                           std::to_string(LANES) + " vec " + std::to_string(VEC) + " items " +
                           std::to_string(ITEMS) + (misalign ? " misaligned" : "");
  expect_close<T>(qo.values(),
                  kt::rmsnorm_rope_f64(qv, qwv, table32, pos, tokens, hq, D, max_pos, style, 1e-6f),
                  what + " q");
  expect_close<T>(ko.values(),
                  kt::rmsnorm_rope_f64(kv, kwv, table32, pos, tokens, hk, D, max_pos, style, 1e-6f),
                  what + " k");
}

TEST(OpsEmulation, RmsNormRopeBothPairings) {
  rope_case<64, 16, 2, 2, false, bf16e>(3, 2, 1);
  rope_case<64, 16, 2, 2, true, bf16e>(3, 2, 1);
  rope_case<64, 4, 8, 8, false, bf16e>(2, 3, 2);  // 10 items in blocks of 8: an idle tail
  rope_case<64, 8, 4, 4, true, float>(3, 1, 2);
  rope_case<128, 32, 2, 1, false, float>(2, 2, 1);
  rope_case<64, 8, 4, 4, true, bf16e>(3, 1, 1, /*misalign=*/true);
  // Several heads a lane group: items of one group in different tokens, q and k, an idle tail.
  rope_case<64, 4, 8, 8, false, bf16e, 2>(3, 3, 2);  // 15 items in blocks of 16
  rope_case<128, 8, 8, 4, true, bf16e, 4>(5, 4, 1);  // 25 items in blocks of 16
  rope_case<64, 8, 4, 4, false, bf16e, 2>(3, 1, 1, /*misalign=*/true);
  rope_case<128, 8, 8, 8, false, bf16e, 2, 1152>(5, 4, 1);  // a register cap changes no result
}

TEST(OpsEmulation, RmsNormRopeReferenceKernel) {
  for (bool gptj : {false, true}) {
    const int tokens = 3, hq = 2, hk = 1, d = 64, max_pos = 5;
    Buf<float> q(tokens * hq * d), k(tokens * hk * d), qw(d), kw(d);
    const auto qv = q.randomize(21), kv = k.randomize(22), qwv = qw.randomize(23), kwv = kw.randomize(24);
    const auto table = kt::rope_table_f64(max_pos, d, 500000.0);
    std::vector<float> cs(table.begin(), table.end());
    std::vector<double> table32(cs.begin(), cs.end());
    std::vector<int32_t> pos = {4, 9, -1};
    std::vector<float> q_ref(qv.size(), NAN), k_ref(kv.size(), NAN);
    launch({1, 1, 1}, {128, 1, 1}, [&] {
      if (gptj) {
        ktune_rmsnorm_rope_reference<float, true>(q.p, k.p, qw.p, kw.p, cs.data(), pos.data(), q_ref.data(),
                                                  k_ref.data(), tokens, hq, hk, d, max_pos, 1e-6f);
      } else {
        ktune_rmsnorm_rope_reference<float, false>(q.p, k.p, qw.p, kw.p, cs.data(), pos.data(), q_ref.data(),
                                                   k_ref.data(), tokens, hq, hk, d, max_pos, 1e-6f);
      }
    });
    const auto style = gptj ? kt::RopeStyle::kGptj : kt::RopeStyle::kNeox;
    expect_close<float>(std::vector<double>(q_ref.begin(), q_ref.end()),
                        kt::rmsnorm_rope_f64(qv, qwv, table32, pos, tokens, hq, d, max_pos, style, 1e-6f),
                        "q ref");
    expect_close<float>(std::vector<double>(k_ref.begin(), k_ref.end()),
                        kt::rmsnorm_rope_f64(kv, kwv, table32, pos, tokens, hk, d, max_pos, style, 1e-6f),
                        "k ref");
  }
}

// ---- rope_append -------------------------------------------------------------------------------

/// A rope_append call's cache geometry and positions: token t is token t % seq_tokens of sequence
/// t / seq_tokens at position 5 + t % seq_tokens + sequence (distinct rows within a
/// sequence while seq_tokens <= the rows a sequence holds, past the 7-row table); paged: 3 blocks a
/// sequence, the blocks in reverse, token 0's block id out of range (its rows write nothing).
struct AppendGeometry {
  kt::KvCacheGeometry cache;
  std::vector<int32_t> positions;
  std::vector<int32_t> block_table;
  std::size_t cache_elements = 0;
};

AppendGeometry append_geometry(int tokens, int hk, int d, int seq_tokens, int cache_rows, bool paged) {
  AppendGeometry g;
  const int sequences = (tokens + seq_tokens - 1) / seq_tokens;
  g.cache = {seq_tokens, cache_rows, paged, paged ? 3 : 1, paged ? sequences * 3 + 1 : 1};
  for (int t = 0; t < tokens; ++t) g.positions.push_back(5 + t % seq_tokens + t / seq_tokens);
  if (paged) {
    for (int i = 0; i < sequences * 3; ++i) g.block_table.push_back(sequences * 3 - 1 - i);
    g.block_table[static_cast<std::size_t>((5 / cache_rows) % 3)] = sequences * 3 + 4;  // writes nothing
  }
  const int64_t blocks = paged ? g.cache.num_blocks : sequences;
  g.cache_elements = static_cast<std::size_t>(blocks * hk * cache_rows * d);
  return g;
}

/// Close where the reference wrote; NaN (the poison, untouched) exactly where it did not.
template <class T>
void expect_cache(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::vector<double> g, w;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << what << " element " << i << " was written: " << got[i];
    } else {
      g.push_back(got[i]);
      w.push_back(want[i]);
    }
  }
  ASSERT_FALSE(w.empty()) << what << ": the reference wrote nothing";
  expect_close<T>(g, w, what);
}

template <int D, int R, int LANES, int VEC, int HEADS, bool GPTJ, bool NORM, bool PAGED, class T,
          int ITEMS = 1>
void rope_append_case(int tokens, int hq, int hk, int seq_tokens, int cache_rows, bool misalign = false) {
  const int max_pos = 7;
  const AppendGeometry g = append_geometry(tokens, hk, D, seq_tokens, cache_rows, PAGED);
  Buf<T> q(std::size_t(tokens) * hq * D, misalign), k(std::size_t(tokens) * hk * D, misalign),
      v(std::size_t(tokens) * hk * D, misalign), qw(D, misalign), kw(D, misalign),
      qo(std::size_t(tokens) * hq * D, misalign), kc(g.cache_elements, misalign),
      vc(g.cache_elements, misalign);
  const auto qv = q.randomize(41), kv = k.randomize(42), vv = v.randomize(43), qwv = qw.randomize(44),
             kwv = kw.randomize(45);
  const auto table = kt::rope_table_f64(max_pos, R, 10000.0);
  std::vector<float> cs(table.begin(), table.end());
  std::vector<double> table32(cs.begin(), cs.end());
  launch({cdiv((long long)tokens * (hq + 2 * hk), HEADS * ITEMS), 1, 1}, {LANES * HEADS, 1, 1}, [&] {
    ktune_rope_append<D, R, LANES, VEC, HEADS, ITEMS, GPTJ, NORM, PAGED, T>(
        q.p, k.p, v.p, NORM ? qw.p : nullptr, NORM ? kw.p : nullptr, cs.data(), g.positions.data(),
        PAGED ? g.block_table.data() : nullptr, qo.p, kc.p, vc.p, tokens, hq, hk, seq_tokens, cache_rows,
        static_cast<int>(g.cache.max_blocks), static_cast<int>(g.cache.num_blocks), max_pos, 1e-6f);
  });
  kt::RopeAppendInputs in;
  in.q = qv, in.k = kv, in.v = vv;
  if (NORM) in.q_weight = qwv, in.k_weight = kwv;
  in.cos_sin = table32, in.positions = g.positions, in.block_table = g.block_table;
  in.tokens = tokens, in.heads_q = hq, in.heads_kv = hk, in.head_dim = D, in.rot_dim = R;
  in.style = GPTJ ? kt::RopeStyle::kGptj : kt::RopeStyle::kNeox;
  std::vector<double> k_want(g.cache_elements, NAN), v_want(g.cache_elements, NAN);
  const auto q_want = kt::rope_append_f64(in, g.cache, k_want, v_want);
  const std::string what = std::string("rope_append ") + (GPTJ ? "gptj" : "neox") + (NORM ? "+norm" : "") +
                           (PAGED ? "+paged" : "") + " d" + std::to_string(D) + " r" + std::to_string(R) +
                           " lanes " + std::to_string(LANES) + " vec " + std::to_string(VEC) + " items " +
                           std::to_string(ITEMS) + (misalign ? " misaligned" : "");
  expect_close<T>(qo.values(), q_want, what + " q");
  expect_cache<T>(kc.values(), k_want, what + " k cache");
  expect_cache<T>(vc.values(), v_want, what + " v cache");
}

TEST(OpsEmulation, RopeAppendContiguous) {
  // Decode (a token a sequence) and prefill (several tokens a sequence, rows past the end wrap).
  rope_append_case<64, 64, 4, 2, 16, false, false, false, bf16e>(3, 2, 1, 1, 9);
  rope_append_case<64, 64, 8, 4, 4, true, false, false, float>(5, 3, 1, 5, 16);
  rope_append_case<128, 128, 16, 4, 2, false, false, false, bf16e, 2>(4, 2, 2, 2,
                                                                      3);  // 24 items, blocks of 4
  // Partial rotary: the tail passes through.
  rope_append_case<128, 64, 4, 4, 8, false, false, false, bf16e>(3, 2, 1, 3, 4);
  rope_append_case<128, 64, 4, 4, 8, true, false, false, float, 4>(3, 2, 1, 1, 6);
  rope_append_case<64, 32, 8, 2, 4, false, false, false, bf16e>(2, 3, 1, 2, 4, /*misalign=*/true);
}

TEST(OpsEmulation, RopeAppendWithTheQkNorm) {
  rope_append_case<128, 128, 16, 2, 2, false, true, false, bf16e>(3, 2, 1, 1, 4);
  rope_append_case<128, 64, 8, 4, 4, true, true, false, float, 2>(3, 3, 2, 3, 5);  // partial + norm
  rope_append_case<64, 64, 4, 8, 8, false, true, true, bf16e>(4, 2, 1, 2, 2, /*misalign=*/true);
}

TEST(OpsEmulation, RopeAppendPaged) {
  // Block size 2 and 4: positions cross blocks; one block id out of range writes nothing.
  rope_append_case<64, 64, 4, 2, 16, false, false, true, bf16e>(6, 2, 1, 3, 2);
  rope_append_case<64, 64, 8, 4, 4, true, false, true, float, 2>(4, 2, 2, 4, 4);
  rope_append_case<128, 64, 4, 4, 8, false, false, true, bf16e, 4>(5, 3, 1, 1, 2);
}

TEST(OpsEmulation, RopeAppendReferenceKernel) {
  const int tokens = 4, hq = 2, hk = 1, d = 64, r = 32, max_pos = 5, seq_tokens = 2, rows = 2;
  for (bool paged : {false, true}) {
    const AppendGeometry g = append_geometry(tokens, hk, d, seq_tokens, rows, paged);
    Buf<float> q(tokens * hq * d), k(tokens * hk * d), v(tokens * hk * d), qw(d), kw(d);
    const auto qv = q.randomize(51), kv = k.randomize(52), vv = v.randomize(53), qwv = qw.randomize(54),
               kwv = kw.randomize(55);
    const auto table = kt::rope_table_f64(max_pos, r, 500000.0);
    std::vector<float> cs(table.begin(), table.end());
    std::vector<double> table32(cs.begin(), cs.end());
    std::vector<float> q_ref(qv.size(), NAN), k_ref(g.cache_elements, NAN), v_ref(g.cache_elements, NAN);
    launch({1, 1, 1}, {128, 1, 1}, [&] {
      const int mb = static_cast<int>(g.cache.max_blocks), nb = static_cast<int>(g.cache.num_blocks);
      if (paged) {
        ktune_rope_append_reference<float, true, true, true>(
            q.p, k.p, v.p, qw.p, kw.p, cs.data(), g.positions.data(), g.block_table.data(), q_ref.data(),
            k_ref.data(), v_ref.data(), tokens, hq, hk, d, r, seq_tokens, rows, mb, nb, max_pos, 1e-6f);
      } else {
        ktune_rope_append_reference<float, true, true, false>(
            q.p, k.p, v.p, qw.p, kw.p, cs.data(), g.positions.data(), nullptr, q_ref.data(), k_ref.data(),
            v_ref.data(), tokens, hq, hk, d, r, seq_tokens, rows, mb, nb, max_pos, 1e-6f);
      }
    });
    kt::RopeAppendInputs in;
    in.q = qv, in.k = kv, in.v = vv, in.q_weight = qwv, in.k_weight = kwv;
    in.cos_sin = table32, in.positions = g.positions, in.block_table = g.block_table;
    in.tokens = tokens, in.heads_q = hq, in.heads_kv = hk, in.head_dim = d, in.rot_dim = r;
    in.style = kt::RopeStyle::kGptj;
    std::vector<double> k_want(g.cache_elements, NAN), v_want(g.cache_elements, NAN);
    const auto q_want = kt::rope_append_f64(in, g.cache, k_want, v_want);
    expect_close<float>(std::vector<double>(q_ref.begin(), q_ref.end()), q_want, "q ref");
    expect_cache<float>(std::vector<double>(k_ref.begin(), k_ref.end()), k_want, "k cache ref");
    expect_cache<float>(std::vector<double>(v_ref.begin(), v_ref.end()), v_want, "v cache ref");
  }
}

// ---- softmax -----------------------------------------------------------------------------------

template <int THREADS, int ROWS, int VEC, bool ONLINE, int MASK, class T>
void softmax_case(int rows, int cols, bool misalign = false) {
  Buf<T> x(std::size_t(rows) * cols, misalign), y(std::size_t(rows) * cols, misalign);
  const auto xv = x.randomize(31u + cols);
  std::vector<int32_t> lengths(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) lengths[std::size_t(r)] = r == 1 ? 0 : (r == 2 ? cols + 5 : 7 * r + 3);
  const int row_offset = std::max(cols - rows, 0);
  const float scale = 0.75f;
  const int chunks = ONLINE ? 0 : (cols + THREADS * VEC - 1) / (THREADS * VEC);
  launch({cdiv(rows, ROWS), 1, 1}, {THREADS * ROWS, 1, 1}, [&] {
    if (ONLINE)
      ktune_softmax<THREADS, ROWS, VEC, 0, MASK, T>(x.p, y.p, lengths.data(), rows, cols, scale, row_offset);
    if (chunks == 1)
      ktune_softmax<THREADS, ROWS, VEC, 1, MASK, T>(x.p, y.p, lengths.data(), rows, cols, scale, row_offset);
    if (chunks == 2)
      ktune_softmax<THREADS, ROWS, VEC, 2, MASK, T>(x.p, y.p, lengths.data(), rows, cols, scale, row_offset);
    if (chunks == 3)
      ktune_softmax<THREADS, ROWS, VEC, 3, MASK, T>(x.p, y.p, lengths.data(), rows, cols, scale, row_offset);
  });
  ASSERT_TRUE(ONLINE || (chunks >= 1 && chunks <= 3));
  const auto mask = MASK == 0   ? kt::SoftmaxMask::kNone
                    : MASK == 1 ? kt::SoftmaxMask::kCausal
                                : kt::SoftmaxMask::kPadding;
  const auto want = kt::softmax_f64(xv, rows, cols, scale, mask, row_offset, lengths);
  expect_close<T>(y.values(), want,
                  "softmax mask " + std::to_string(MASK) + (ONLINE ? " online " : " one-pass ") +
                      std::to_string(rows) + "x" + std::to_string(cols) + (misalign ? " misaligned" : ""),
                  1e-7);
}

TEST(OpsEmulation, SoftmaxOnePassAndOnlineEveryMask) {
  softmax_case<32, 2, 8, false, 0, bf16e>(3, 37);
  softmax_case<32, 2, 8, true, 0, bf16e>(3, 37);
  softmax_case<64, 1, 4, false, 0, float>(2, 500);  // 2 chunks, tail
  softmax_case<32, 4, 4, true, 0, float>(5, 1001);  // online, many vectors a thread
  softmax_case<32, 1, 8, false, 1, bf16e>(4, 40);   // causal
  softmax_case<64, 1, 4, true, 1, float>(6, 130);   // causal, online
  softmax_case<32, 2, 8, false, 2, bf16e>(4, 64);   // padding: lengths 3, 0, > cols, 24
  softmax_case<32, 2, 2, true, 2, float>(4, 77);
  softmax_case<32, 1, 8, true, 0, bf16e>(2, 128, /*misalign=*/true);
}

/// ONLINE 2 (ktune_softmax_staged, one row a block) or SPLIT > 1 blocks a row (ktune_softmax_partial
/// then ktune_softmax_split_finish, segments of `seg` columns).
template <int THREADS, int VEC, int MASK, class T>
void softmax_long_case(int rows, int cols, int split, bool misalign = false) {
  Buf<T> x(std::size_t(rows) * cols, misalign), y(std::size_t(rows) * cols, misalign);
  const auto xv = x.randomize(57u + cols);
  std::vector<int32_t> lengths(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) lengths[std::size_t(r)] = r == 1 ? 0 : (r == 2 ? cols + 5 : 11 * r + 3);
  const int row_offset = std::max(cols - rows, 0);
  const float scale = 0.75f;
  if (split == 1) {
    launch({unsigned(rows), 1, 1}, {THREADS, 1, 1}, [&] {
      ktune_softmax_staged<THREADS, VEC, MASK, T>(x.p, y.p, lengths.data(), rows, cols, scale, row_offset);
    });
  } else {
    const int seg = (cols + split - 1) / split;
    const int seg_vec = (seg + VEC - 1) / VEC * VEC;
    std::vector<float> partials(std::size_t(rows) * split * 2, NAN);
    launch({unsigned(split), unsigned(rows), 1}, {THREADS, 1, 1}, [&] {
      ktune_softmax_partial<THREADS, VEC, MASK, T>(x.p, partials.data(), lengths.data(), rows, cols, scale,
                                                   row_offset, seg_vec);
    });
    launch({unsigned(split), unsigned(rows), 1}, {THREADS, 1, 1}, [&] {
      ktune_softmax_split_finish<THREADS, VEC, MASK, T>(x.p, partials.data(), y.p, lengths.data(), rows, cols,
                                                        scale, row_offset, seg_vec);
    });
  }
  const auto mask = MASK == 0   ? kt::SoftmaxMask::kNone
                    : MASK == 1 ? kt::SoftmaxMask::kCausal
                                : kt::SoftmaxMask::kPadding;
  const auto want = kt::softmax_f64(xv, rows, cols, scale, mask, row_offset, lengths);
  expect_close<T>(y.values(), want,
                  "softmax mask " + std::to_string(MASK) + (split == 1 ? " staged " : " split ") +
                      std::to_string(split) + " " + std::to_string(rows) + "x" + std::to_string(cols) +
                      (misalign ? " misaligned" : ""),
                  1e-7);
}

TEST(OpsEmulation, SoftmaxStagedEveryMask) {
  softmax_long_case<32, 8, 0, bf16e>(3, 1037, 1);  // several batches of kUnroll vectors, odd tail
  softmax_long_case<64, 4, 0, float>(2, 512, 1);   // round
  softmax_long_case<32, 8, 1, bf16e>(5, 300, 1);   // causal
  softmax_long_case<32, 4, 2, float>(4, 77, 1);    // padding: lengths 3, 0, > cols, 36
  softmax_long_case<32, 8, 0, bf16e>(2, 128, 1, /*misalign=*/true);
}

TEST(OpsEmulation, SoftmaxSplitRowEveryMask) {
  softmax_long_case<32, 8, 0, bf16e>(2, 3001, 4);  // odd: segments of 752 columns, short last one
  softmax_long_case<64, 4, 0, float>(3, 2048, 8);
  softmax_long_case<32, 8, 1, bf16e>(6, 700, 3);  // causal: early rows end in the first segment
  softmax_long_case<32, 4, 2, float>(4, 500, 5);  // padding, incl. an empty row
  softmax_long_case<32, 8, 0, bf16e>(2, 1000, 7, /*misalign=*/true);
  softmax_long_case<32, 8, 0, bf16e>(2, 40, 8);  // more blocks than vectors: empty segments
}

TEST(OpsEmulation, SoftmaxReferenceKernel) {
  for (int mask : {0, 1, 2}) {
    const int rows = 5, cols = 45;
    Buf<float> x(rows * cols);
    const auto xv = x.randomize(41);
    std::vector<int32_t> lengths = {3, 0, 60, 45, 17};
    std::vector<float> y_ref(rows * cols, NAN);
    launch({2, 1, 1}, {128, 1, 1}, [&] {
      if (mask == 0)
        ktune_softmax_reference<float, 0>(x.p, y_ref.data(), lengths.data(), rows, cols, 0.75f, 40);
      if (mask == 1)
        ktune_softmax_reference<float, 1>(x.p, y_ref.data(), lengths.data(), rows, cols, 0.75f, 40);
      if (mask == 2)
        ktune_softmax_reference<float, 2>(x.p, y_ref.data(), lengths.data(), rows, cols, 0.75f, 40);
    });
    const auto m = mask == 0   ? kt::SoftmaxMask::kNone
                   : mask == 1 ? kt::SoftmaxMask::kCausal
                               : kt::SoftmaxMask::kPadding;
    expect_close<float>(std::vector<double>(y_ref.begin(), y_ref.end()),
                        kt::softmax_f64(xv, rows, cols, 0.75, m, 40, lengths), "softmax reference", 1e-7);
  }
}

// ---- swiglu ------------------------------------------------------------------------------------

template <int THREADS, int VEC, int ITEMS, bool SPLIT, class T>
void swiglu_case(int m, int inter, bool misalign = false) {
  Buf<T> a(std::size_t(m) * inter * (SPLIT ? 1 : 2), misalign), b(std::size_t(m) * inter, misalign),
      out(std::size_t(m) * inter, misalign);
  const auto av = a.randomize(51), bv = b.randomize(52);
  launch({cdiv(inter, THREADS * VEC * ITEMS), static_cast<unsigned>(m), 1}, {THREADS, 1, 1},
         [&] { ktune_swiglu<THREADS, VEC, ITEMS, SPLIT, T>(a.p, SPLIT ? b.p : nullptr, out.p, m, inter); });
  std::vector<double> gate = av, up = bv;
  if (!SPLIT) kt::split_gate_up(av, m, inter, gate, up);
  expect_close<T>(out.values(), kt::swiglu_f64(gate, up),
                  std::string("swiglu ") + (SPLIT ? "split " : "fused ") + std::to_string(m) + "x" +
                      std::to_string(inter) + (misalign ? " misaligned" : ""));
}

TEST(OpsEmulation, SwigluFusedAndSplit) {
  swiglu_case<32, 8, 1, false, bf16e>(3, 37);  // fused, odd: up half and rows misaligned
  swiglu_case<32, 8, 2, false, bf16e>(2, 1024);
  swiglu_case<64, 4, 2, true, float>(3, 301);
  swiglu_case<32, 2, 4, true, bf16e>(2, 130);
  swiglu_case<32, 8, 1, true, bf16e>(2, 64, /*misalign=*/true);
}

TEST(OpsEmulation, SwigluReferenceKernel) {
  Buf<bf16e> x(3 * 2 * 37);
  const auto xv = x.randomize(61);
  std::vector<float> out(3 * 37, NAN);
  launch({1, 1, 1}, {256, 1, 1},
         [&] { ktune_swiglu_reference<bf16e, false>(x.p, nullptr, out.data(), 3, 37); });
  std::vector<double> gate, up;
  kt::split_gate_up(xv, 3, 37, gate, up);
  expect_close<float>(std::vector<double>(out.begin(), out.end()), kt::swiglu_f64(gate, up),
                      "swiglu reference");
}

}  // namespace
