// The gemm templates' own source, run on the CPU (a std::thread per CUDA thread, a std::barrier per
// __syncthreads): catches indexing, predication, pipeline and split-K bugs on any machine, before
// GPU time is spent. Compared with a float64 product of the same inputs (plus the bias, through SiLU,
// for the epilogue forms); outputs and workspace are poisoned with NaN first, so an element left
// unwritten fails. f32 and an emulated bf16.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gemm_templates_emulated.hpp"

thread_local uint3e threadIdx;
thread_local uint3e blockIdx;
uint3e blockDim;
uint3e gridDim;
std::barrier<>* g_barrier = nullptr;
float g_shfl[1024];
alignas(16) unsigned char g_smem[232448];  // the H200's opt-in shared memory per block

namespace {

/// Runs `body` for every thread of every block, one block at a time.
void launch(uint3e grid, uint3e block, const std::function<void()>& body) {
  gridDim = grid;
  blockDim = block;
  const unsigned n = block.x * block.y * block.z;
  for (unsigned bz = 0; bz < grid.z; ++bz) {
    for (unsigned by = 0; by < grid.y; ++by) {
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        std::memset(g_smem, 0xCD, sizeof g_smem);  // stale shared memory must not matter
        std::barrier<> barrier(n);
        g_barrier = &barrier;
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < n; ++t) {
          threads.emplace_back([&, t] {
            blockIdx = {bx, by, bz};
            threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
            body();
          });
        }
        for (auto& t : threads) t.join();
      }
    }
  }
}

unsigned cdiv(long long a, long long b) { return static_cast<unsigned>((a + b - 1) / b); }

void free_aligned(void* p) { std::free(p); }
using Block = std::unique_ptr<void, decltype(&free_aligned)>;
Block alloc16(std::size_t bytes) {
  return Block(std::aligned_alloc(16, (bytes + 31) / 16 * 16), &free_aligned);
}

/// Row strides in elements; 0: contiguous (K for A, K or N for B by layout, N for C).
struct Strides {
  int lda = 0, ldb = 0, ldc = 0;
};

/// The problem's epilogue: + bias[n], then SiLU.
struct Epilogue {
  bool bias = false, silu = false;
};

/// Byte the padding of C (its columns beyond N when ldc > N) holds: a finite value in f32 and in
/// bf16, which the kernels must leave as it is.
constexpr unsigned char kPadByte = 0x5A;

/// Inputs (random, never zero; A and B optionally one element past 16-byte alignment; rows
/// optionally strided, the padding between rows NaN so that a read of it shows), poisoned outputs
/// and workspace (C's padding holds kPadByte), and the float64 product.
template <class T>
struct Problem {
  int m, n, k;
  bool nt;
  int lda, ldb, ldc;
  Block a_mem{nullptr, &free_aligned}, b_mem{nullptr, &free_aligned}, c_mem{nullptr, &free_aligned},
      ws_mem{nullptr, &free_aligned};
  T* a = nullptr;
  T* b = nullptr;
  T* c = nullptr;
  float* ws = nullptr;
  std::vector<T> bias;  // N values when the epilogue has a bias
  std::vector<double> expected;

  Problem(int m_, int n_, int k_, bool nt_, int split_k, bool misalign = false, Strides s = {},
          Epilogue epi = {})
      : m(m_), n(n_), k(k_), nt(nt_) {
    lda = s.lda != 0 ? s.lda : k;
    ldb = s.ldb != 0 ? s.ldb : (nt ? k : n);
    ldc = s.ldc != 0 ? s.ldc : n;
    const int b_rows = nt ? n : k;
    const std::size_t off = misalign ? sizeof(T) : 0;
    a_mem = alloc16(std::size_t(m) * lda * sizeof(T) + off);
    b_mem = alloc16(std::size_t(b_rows) * ldb * sizeof(T) + off);
    c_mem = alloc16(std::size_t(m) * ldc * sizeof(T));
    ws_mem = alloc16(std::size_t(split_k) * m * n * sizeof(float));
    a = reinterpret_cast<T*>(static_cast<char*>(a_mem.get()) + off);
    b = reinterpret_cast<T*>(static_cast<char*>(b_mem.get()) + off);
    c = static_cast<T*>(c_mem.get());
    ws = static_cast<float*>(ws_mem.get());
    std::memset(a, 0xFF, std::size_t(m) * lda * sizeof(T));  // NaN padding
    std::memset(b, 0xFF, std::size_t(b_rows) * ldb * sizeof(T));
    std::mt19937 rng(static_cast<unsigned>(m * 131 + n * 7 + k));
    std::uniform_real_distribution<float> mag(0.25f, 1.0f);
    auto value = [&] { return ktune_dev::from_f32<T>((rng() & 1 ? 1.0f : -1.0f) * mag(rng)); };
    for (int i = 0; i < m; ++i) {
      for (int p = 0; p < k; ++p) a[std::size_t(i) * lda + p] = value();
    }
    for (int r = 0; r < b_rows; ++r) {
      for (int col = 0; col < (nt ? k : n); ++col) b[std::size_t(r) * ldb + col] = value();
    }
    std::memset(c, kPadByte, std::size_t(m) * ldc * sizeof(T));
    for (int i = 0; i < m; ++i) std::memset(c + std::size_t(i) * ldc, 0xFF, std::size_t(n) * sizeof(T));
    std::memset(ws, 0xFF, std::size_t(split_k) * m * n * sizeof(float));
    expected.assign(std::size_t(m) * n, 0.0);
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        double sum = 0;
        for (int p = 0; p < k; ++p) {
          const T bv = nt ? b[std::size_t(j) * ldb + p] : b[std::size_t(p) * ldb + j];
          sum += double(ktune_dev::to_f32(a[std::size_t(i) * lda + p])) * ktune_dev::to_f32(bv);
        }
        expected[std::size_t(i) * n + j] = sum;
      }
    }
    if (epi.bias) {
      for (int j = 0; j < n; ++j) bias.push_back(value());
    }
    for (std::size_t i = 0; i < expected.size(); ++i) {
      double v = expected[i];
      if (epi.bias) v += ktune_dev::to_f32(bias[i % std::size_t(n)]);
      if (epi.silu) v = v / (1.0 + std::exp(-v));
      expected[i] = v;
    }
  }

  const T* bias_or_null() const { return bias.empty() ? nullptr : bias.data(); }

  /// Every element within f32 accumulation error (f32) or half an output ulp plus that (bf16), and
  /// C's padding untouched.
  void expect_close(const std::string& what) const {
    for (int i = 0; i < m * n; ++i) {
      const double got = ktune_dev::to_f32(c[std::size_t(i / n) * ldc + i % n]);
      const double want = expected[std::size_t(i)];
      const double tol = sizeof(T) == 4 ? 1e-5 * std::sqrt(double(k)) : std::fabs(want) * 0.0079 + 1e-3;
      ASSERT_TRUE(std::fabs(got - want) <= tol) << what << " element " << i << ": " << got << " vs " << want;
    }
    const auto* bytes = reinterpret_cast<const unsigned char*>(c);
    for (int i = 0; i < m; ++i) {
      for (std::size_t at = (std::size_t(i) * ldc + n) * sizeof(T); at < std::size_t(i + 1) * ldc * sizeof(T);
           ++at) {
        ASSERT_EQ(bytes[at], kPadByte)
            << what << ": C's padding written in row " << i << " (ldc " << ldc << ")";
      }
    }
  }

  std::string label(const std::string& kernel) const {
    return kernel + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " lda " +
           std::to_string(lda) + " ldb " + std::to_string(ldb) + " ldc " + std::to_string(ldc);
  }
};

/// What ends a split-K launch: the ordered reduction, or with an epilogue ktune_gemm_finish.
template <class T, bool BIAS, bool SILU>
void finish_splits(Problem<T>& p, int splits) {
  launch({cdiv((long long)p.m * p.n, 256), 1, 1}, {256, 1, 1}, [&] {
    if (BIAS || SILU) {
      ktune_gemm_finish<T, BIAS, SILU>(p.ws, p.c, p.bias_or_null(), p.m, p.n, p.ldc, splits);
    } else {
      ktune_gemm_splitk_reduce<T>(p.ws, p.c, p.m, p.n, p.ldc, splits);
    }
  });
}

template <int BM, int BN, int BK, int WM, int WN, int S, int SK, class T, bool NT, bool BIAS = false,
          bool SILU = false>
void tiled(int m, int n, int k, bool misalign = false, Strides strides = {}) {
  Problem<T> p(m, n, k, NT, SK, misalign, strides, {BIAS, SILU});
  launch({cdiv(n, BN), cdiv(m, BM), SK}, {WM * WN * 32, 1, 1}, [&] {
    ktune_gemm_tiled<BM, BN, BK, WM, WN, S, SK, T, NT, BIAS, SILU>(p.a, p.b, p.c, p.ws, p.bias_or_null(), m,
                                                                   n, k, p.lda, p.ldb, p.ldc);
  });
  if (SK > 1) finish_splits<T, BIAS, SILU>(p, SK);
  p.expect_close(p.label("tiled"));
}

template <int BK, int SK, int W, int R, int MT, class T, bool BIAS = false, bool SILU = false>
void gemv(int m, int n, int k, bool misalign = false, Strides strides = {}) {
  Problem<T> p(m, n, k, true, SK, misalign, strides, {BIAS, SILU});
  launch({cdiv(n, R), SK, 1}, {W * 32, 1, 1}, [&] {
    ktune_gemv<BK, SK, W, R, MT, T, BIAS, SILU>(p.a, p.b, p.c, p.ws, p.bias_or_null(), m, n, k, p.lda, p.ldb,
                                                p.ldc);
  });
  if (SK > 1) finish_splits<T, BIAS, SILU>(p, SK);
  p.expect_close(p.label("gemv"));
}

TEST(GemmEmulation, ReferenceKernel) {
  for (bool nt : {true, false}) {
    Problem<float> p(37, 29, 53, nt, 1);
    std::vector<float> c_ref(37 * 29, NAN);
    auto body = [&] {
      if (nt) {
        ktune_gemm_reference<float, true>(p.a, p.b, c_ref.data(), 37, 29, 53);
      } else {
        ktune_gemm_reference<float, false>(p.a, p.b, c_ref.data(), 37, 29, 53);
      }
    };
    launch({cdiv(29, 16), cdiv(37, 16), 1}, {16, 16, 1}, body);
    for (std::size_t i = 0; i < c_ref.size(); ++i) ASSERT_NEAR(c_ref[i], p.expected[i], 1e-4) << i;
  }
}

TEST(GemmEmulation, EpilogueReferenceKernel) {
  for (bool nt : {true, false}) {
    Problem<float> p(19, 37, 45, nt, 1, false, {}, {true, true});
    std::vector<float> c_ref(19 * 37, NAN);
    auto body = [&] {
      if (nt) {
        ktune_gemm_reference_epilogue<float, true, true, true>(p.a, p.b, p.bias.data(), c_ref.data(), 19, 37,
                                                               45);
      } else {
        ktune_gemm_reference_epilogue<float, false, true, true>(p.a, p.b, p.bias.data(), c_ref.data(), 19, 37,
                                                                45);
      }
    };
    launch({cdiv(37, 32), cdiv(19, 8), 1}, {32, 8, 1}, body);
    for (std::size_t i = 0; i < c_ref.size(); ++i) ASSERT_NEAR(c_ref[i], p.expected[i], 1e-4) << i;
  }
}

TEST(GemmEmulation, TiledEpiloguesInBothLayoutsWithAndWithoutSplits) {
  // The epilogue in the kernel (SPLIT_K 1) and in ktune_gemm_finish (split-K), strided C included.
  tiled<64, 64, 32, 2, 2, 3, 1, float, true, true, false>(33, 70, 96);
  tiled<64, 64, 32, 2, 2, 3, 1, float, false, false, true>(33, 70, 96);
  tiled<32, 64, 16, 1, 2, 2, 1, bf16e, true, true, true>(37, 72, 136, false, {.ldc = 80});
  tiled<32, 64, 16, 1, 2, 2, 4, bf16e, false, true, true>(37, 70, 131, false, {.ldc = 77});
  tiled<16, 128, 32, 1, 4, 2, 8, float, true, true, false>(3, 200, 40);  // splits without K tiles
}

TEST(GemmEmulation, GemvEpiloguesWithAndWithoutSplits) {
  gemv<256, 1, 4, 2, 1, bf16e, true, false>(1, 5, 1024);
  gemv<256, 1, 4, 2, 4, bf16e, true, true>(3, 7, 1000, false, {.ldc = 9});
  gemv<256, 4, 4, 2, 4, bf16e, false, true>(3, 3, 999);  // scalar path, split
  gemv<128, 8, 1, 8, 2, float, true, true>(2, 7, 300);   // rows past N, splits without K
}

TEST(GemmEmulation, TiledOddShapesBothLayouts) {
  tiled<64, 64, 32, 2, 2, 3, 1, float, true>(77, 93, 131);
  tiled<64, 64, 32, 2, 2, 3, 1, float, false>(77, 93, 131);
  tiled<32, 64, 16, 1, 2, 2, 4, bf16e, false>(37, 70, 131);  // element copies (K, N % 8 != 0)
  tiled<32, 64, 16, 1, 2, 2, 4, bf16e, true>(37, 72, 136);   // 16-byte copies
  tiled<32, 64, 16, 1, 2, 2, 4, bf16e, false>(37, 72, 136);
}

TEST(GemmEmulation, TiledSplitsWithoutKTilesAndDeepPipeline) {
  tiled<16, 128, 32, 1, 4, 2, 8, float, true>(3, 200, 40);  // 2 K tiles over 8 splits
  tiled<128, 64, 64, 4, 2, 4, 2, bf16e, true>(70, 65, 300);
}

TEST(GemmEmulation, TiledMisalignedPointers) {
  tiled<64, 32, 32, 2, 2, 3, 3, float, true>(9, 33, 1024, true);
}

TEST(GemmEmulation, TiledStridedViewsLeaveThePaddingAlone) {
  // Rows further apart than their length: each of A, B, C alone, then all three, in both layouts,
  // with split-K (the reduction writes C through ldc). Strides that keep 16-byte rows take the
  // cp.async path; odd ones the element path.
  tiled<32, 64, 16, 1, 2, 2, 1, bf16e, true>(37, 72, 136, false, {.lda = 136 + 24});
  tiled<32, 64, 16, 1, 2, 2, 1, bf16e, true>(37, 72, 136, false, {.ldb = 136 + 8});
  tiled<32, 64, 16, 1, 2, 2, 1, bf16e, true>(37, 72, 136, false, {.ldc = 72 * 3});
  tiled<32, 64, 16, 1, 2, 2, 4, bf16e, false>(37, 72, 136, false, {.lda = 200, .ldb = 80, .ldc = 77});
  tiled<32, 64, 16, 1, 2, 2, 4, bf16e, true>(37, 70, 136, false, {.lda = 141, .ldb = 139, .ldc = 71});
  tiled<64, 64, 32, 2, 2, 3, 3, float, false>(33, 65, 131, false, {.lda = 140, .ldb = 66, .ldc = 100});
}

TEST(GemmEmulation, GemvStridedViewsLeaveThePaddingAlone) {
  gemv<256, 1, 4, 2, 1, bf16e>(1, 5, 1024, false, {.ldc = 9});
  gemv<256, 4, 4, 2, 4, bf16e>(3, 3, 1000, false, {.lda = 1024, .ldb = 1008, .ldc = 5});  // vector path
  gemv<256, 4, 4, 2, 4, bf16e>(3, 3, 1000, false, {.lda = 1001});                         // scalar path
  gemv<128, 8, 1, 8, 2, float>(2, 7, 300, false, {.lda = 301, .ldb = 304, .ldc = 8});
}

TEST(GemmEmulation, GemvVectorScalarAndSplitPaths) {
  // Few blocks: every emulated shuffle is three block-wide barriers.
  gemv<256, 1, 4, 2, 1, bf16e>(1, 5, 1024);
  gemv<256, 4, 4, 2, 4, bf16e>(3, 3, 1000);  // vector path, partial last chunk
  gemv<256, 4, 4, 2, 4, bf16e>(3, 3, 999);   // scalar path
  gemv<512, 2, 2, 4, 16, bf16e>(16, 5, 2000);
  gemv<128, 8, 1, 8, 2, float>(2, 7, 300);         // rows past N, splits without K
  gemv<256, 2, 4, 1, 1, bf16e>(1, 2, 1024, true);  // misaligned: scalar path
}

}  // namespace
