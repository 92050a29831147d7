// The wgmma template's own source (gemm_wgmma.cu) run on the CPU with a model of wgmma read from
// the PTX ISA (wgmma_emu_device.hpp): the loaders, the 128B swizzle, the descriptors and their k
// advance, the warpgroup split, the accumulator-to-C mapping, predicated edges and the pipeline's
// stage reuse are all checked before GPU time is spent. Two adversarial schedules of the
// asynchronous copies and MMAs (late copies, late MMAs) expose a missing wait or a stage refilled
// too early. Compared with a float64 product; C is poisoned first, so an unwritten element fails.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gemm_wgmma_emulated.hpp"

thread_local uint3e threadIdx;
thread_local uint3e blockIdx;
uint3e blockDim;
uint3e gridDim;
std::barrier<>* g_barrier = nullptr;
alignas(1024) unsigned char g_smem[232448];  // the H200's opt-in shared memory per block

namespace wgmma_emu {
Schedule g_schedule = Schedule::kLateCopies;
std::atomic<int> g_bad_descriptors{0};
thread_local Groups t_copies;
thread_local Groups t_mmas;
}  // namespace wgmma_emu

namespace {

using wgmma_emu::Schedule;

/// Runs `body` for every thread of every block, one block at a time.
void launch(unsigned grid, unsigned block, const std::function<void()>& body, unsigned grid_z = 1) {
  gridDim = {grid, 1, grid_z};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid * grid_z; ++b) {
    const unsigned bx = b % grid;
    const unsigned bz = b / grid;
    std::memset(g_smem, 0xCD, sizeof g_smem);  // stale shared memory must not matter
    std::barrier<> barrier(block);
    g_barrier = &barrier;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < block; ++t) {
      threads.emplace_back([&, t] {
        blockIdx = {bx, 0, bz};
        threadIdx = {t, 0, 0};
        wgmma_emu::t_copies = {};
        wgmma_emu::t_mmas = {};
        body();
        // Nothing may be left in flight when a thread ends.
        if (!wgmma_emu::t_copies.committed.empty() || !wgmma_emu::t_mmas.committed.empty() ||
            !wgmma_emu::t_mmas.open.empty()) {
          ++wgmma_emu::g_bad_descriptors;
        }
      });
    }
    for (auto& t : threads) t.join();
  }
}

unsigned cdiv(long long a, long long b) { return static_cast<unsigned>((a + b - 1) / b); }

/// Row strides in elements; 0: contiguous (K for A, K or N for B by layout, N for C).
struct Strides {
  int lda = 0, ldb = 0, ldc = 0;
};

/// What C's padding (its columns beyond N when ldc > N) holds and must keep: a finite value.
constexpr uint16_t kPadBits = 0x3C5A;

/// Inputs (random, never zero; optionally one element past 16-byte alignment; rows optionally
/// strided with NaN between them, so that a read of the padding shows), a poisoned C whose padding
/// holds kPadBits, the float64 product with the optional bias and SiLU.
template <class T>
struct Problem {
  int m, n, k;
  bool nt;
  int lda, ldb, ldc;
  std::vector<T> a_mem, b_mem, bias, c;
  T* a = nullptr;
  T* b = nullptr;
  std::vector<double> expected;

  Problem(int m_, int n_, int k_, bool nt_, bool with_bias, bool silu, bool misalign, Strides s = {})
      : m(m_), n(n_), k(k_), nt(nt_) {
    lda = s.lda != 0 ? s.lda : k;
    ldb = s.ldb != 0 ? s.ldb : (nt ? k : n);
    ldc = s.ldc != 0 ? s.ldc : n;
    const int b_rows = nt ? n : k;
    const std::size_t off = misalign ? 1 : 0;
    a_mem.assign(std::size_t(m) * lda + 16, T{0xFFFF});  // NaN in both formats
    b_mem.assign(std::size_t(b_rows) * ldb + 16, T{0xFFFF});
    // std::vector's storage is 16-byte aligned by the allocator (operator new: 16 on x86-64).
    a = a_mem.data() + off;
    b = b_mem.data() + off;
    std::mt19937 rng(static_cast<unsigned>(m * 131 + n * 7 + k));
    std::uniform_real_distribution<float> mag(0.25f, 1.0f);
    auto value = [&] { return ktune_dev::from_f32<T>((rng() & 1 ? 1.0f : -1.0f) * mag(rng)); };
    for (int i = 0; i < m; ++i) {
      for (int p = 0; p < k; ++p) a[std::size_t(i) * lda + p] = value();
    }
    for (int r = 0; r < b_rows; ++r) {
      for (int col = 0; col < (nt ? k : n); ++col) b[std::size_t(r) * ldb + col] = value();
    }
    bias.resize(std::size_t(n));
    for (auto& v : bias) v = value();
    c.assign(std::size_t(m) * ldc, T{kPadBits});
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) c[std::size_t(i) * ldc + j] = T{0xFFFF};
    }
    expected.assign(std::size_t(m) * n, 0.0);
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        double sum = 0;
        for (int p = 0; p < k; ++p) {
          const T bv = nt ? b[std::size_t(j) * ldb + p] : b[std::size_t(p) * ldb + j];
          sum += double(ktune_dev::to_f32(a[std::size_t(i) * lda + p])) * ktune_dev::to_f32(bv);
        }
        if (with_bias) sum += ktune_dev::to_f32(bias[std::size_t(j)]);
        if (silu) sum = sum / (1.0 + std::exp(-sum));
        expected[std::size_t(i) * n + j] = sum;
      }
    }
  }

  T& c_at(int row, int col) { return c[std::size_t(row) * ldc + col]; }

  /// Every element within half an output ulp (bf16: 2^-8 relative) plus f32 accumulation error,
  /// and C's padding untouched.
  void expect_close(const std::string& what) const {
    for (int i = 0; i < m * n; ++i) {
      const double got = ktune_dev::to_f32(c[std::size_t(i / n) * ldc + i % n]);
      const double want = expected[std::size_t(i)];
      const double tol = std::fabs(want) * 0.0079 + 1e-3;
      ASSERT_TRUE(std::fabs(got - want) <= tol) << what << " element " << i << " (row " << i / n << ", col "
                                                << i % n << "): " << got << " vs " << want;
    }
    for (int i = 0; i < m; ++i) {
      for (int j = n; j < ldc; ++j) {
        ASSERT_EQ(c[std::size_t(i) * ldc + j].bits, kPadBits)
            << what << ": C's padding written at row " << i << ", column " << j << " (ldc " << ldc << ")";
      }
    }
  }
};

/// `splits` > 1: split-K, the f32 slices summed in order on the host as the reduction kernel does.
template <int BM, int BN, int STAGES, int SWIZZLE, class T, bool NT, bool BIAS = false, bool SILU = false>
void run(int m, int n, int k, Schedule schedule, bool misalign = false, unsigned splits = 1,
         Strides strides = {}) {
  wgmma_emu::g_schedule = schedule;
  wgmma_emu::g_bad_descriptors = 0;
  Problem<T> p(m, n, k, NT, BIAS, SILU, misalign, strides);
  std::vector<float> workspace(splits > 1 ? std::size_t(splits) * m * n : 0, std::nanf(""));
  launch(
      cdiv(m, BM) * cdiv(n, BN), BM / 64 * 128,
      [&] {
        ktune_gemm_wgmma<BM, BN, STAGES, SWIZZLE, T, NT, BIAS, SILU>(p.a, p.b, p.c.data(), workspace.data(),
                                                                     BIAS ? p.bias.data() : nullptr, m, n, k,
                                                                     p.lda, p.ldb, p.ldc);
      },
      splits);
  if (splits > 1) {
    for (std::size_t i = 0; i < std::size_t(m) * n; ++i) {
      float v = 0.0f;
      for (unsigned z = 0; z < splits; ++z) v += workspace[z * std::size_t(m) * n + i];
      if (BIAS) v += ktune_dev::to_f32(p.bias[i % n]);
      if (SILU) v = v / (1.0f + std::exp(-v));
      p.c_at(static_cast<int>(i / n), static_cast<int>(i % n)) = ktune_dev::from_f32<T>(v);
    }
  }
  const std::string what =
      std::string("wgmma<") + std::to_string(BM) + "," + std::to_string(BN) + "," + std::to_string(STAGES) +
      "> " + (NT ? "nt " : "nn ") + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
      (schedule == Schedule::kLateCopies ? " late-copies" : " late-mma") +
      (splits > 1 ? " split " + std::to_string(splits) : "") + " lda " + std::to_string(p.lda) + " ldb " +
      std::to_string(p.ldb) + " ldc " + std::to_string(p.ldc);
  EXPECT_EQ(wgmma_emu::g_bad_descriptors.load(), 0) << what << ": bad descriptor or work left in flight";
  p.expect_close(what);
}

constexpr Schedule kSchedules[] = {Schedule::kLateCopies, Schedule::kLateMma};

TEST(WgmmaEmulation, OneWarpgroupBothLayoutsBothSchedules) {
  for (Schedule s : kSchedules) {
    run<64, 64, 3, 1, bf16e, true>(77, 93, 136, s);   // cp.async path, M, N edges
    run<64, 64, 3, 1, bf16e, false>(77, 96, 136, s);  // "nn" cp.async path
    run<64, 128, 4, 2, f16e, true>(70, 130, 200, s);  // K edge inside a 16-byte chunk row: K % 64 != 0
    run<64, 128, 4, 2, f16e, false>(70, 136, 200, s);
  }
}

TEST(WgmmaEmulation, TwoWarpgroupsWideTiles) {
  for (Schedule s : kSchedules) {
    run<128, 256, 4, 8, bf16e, true>(200, 300, 320, s);
    run<128, 256, 4, 8, bf16e, false>(200, 264, 320, s);  // four 64-n panels of the N-major B
    run<128, 128, 5, 8, f16e, true>(130, 136, 456, s);
  }
}

TEST(WgmmaEmulation, FourWarpgroupsAndDeepPipeline) {
  run<256, 64, 4, 3, bf16e, true>(300, 70, 264, Schedule::kLateMma);
  run<64, 64, 8, 2, bf16e, false>(65, 72, 640, Schedule::kLateMma);  // 10 k tiles through 8 stages
  run<64, 64, 8, 2, bf16e, false>(65, 72, 640, Schedule::kLateCopies);
}

TEST(WgmmaEmulation, ElementPathsAndEpilogues) {
  for (Schedule s : kSchedules) {
    run<64, 64, 3, 1, bf16e, true>(37, 29, 53, s);                        // K % 8 != 0: element loads
    run<64, 64, 3, 1, f16e, false>(37, 30, 64, s);                        // N % 8 != 0: element loads of B
    run<64, 128, 3, 1, bf16e, true>(33, 100, 256, s, /*misalign=*/true);  // misaligned pointers
    run<64, 64, 3, 1, bf16e, true, true, true>(70, 90, 136, s);           // bias + SiLU
    run<128, 128, 4, 8, f16e, false, true, false>(130, 90, 100, s);       // bias, odd N: single stores
  }
}

TEST(WgmmaEmulation, SplitKSlicesSumToTheProduct) {
  for (Schedule s : kSchedules) {
    run<64, 64, 3, 1, bf16e, true>(77, 93, 520, s, false, 3);                  // 9 k tiles: 3 + 3 + 3
    run<64, 128, 4, 2, f16e, false>(70, 136, 200, s, false, 2);                // 4 k tiles, K % 64 != 0
    run<128, 128, 4, 8, bf16e, true, true, true>(130, 136, 330, s, false, 4);  // 6 tiles: 2+2+2+0
    run<64, 64, 3, 1, bf16e, true>(37, 29, 200, s, false, 4);                  // K % 8 != 0: element path
  }
}

TEST(WgmmaEmulation, StridedViewsLeaveThePaddingAlone) {
  // Rows further apart than their length, both layouts: strides that keep 16-byte rows (cp.async),
  // odd ones (element loads, single C stores), with split-K and an epilogue.
  for (Schedule s : kSchedules) {
    run<64, 64, 3, 1, bf16e, true>(77, 93, 136, s, false, 1, {.lda = 200, .ldb = 144, .ldc = 128});
    run<64, 64, 3, 1, bf16e, false>(77, 96, 136, s, false, 1, {.lda = 136 + 64, .ldb = 104, .ldc = 97});
    run<64, 128, 3, 1, f16e, true>(70, 100, 130, s, false, 1, {.lda = 131, .ldb = 133, .ldc = 101});
    run<64, 64, 3, 1, bf16e, true, true, true>(70, 90, 136, s, false, 1, {.ldc = 3 * 90});
    run<64, 64, 3, 1, bf16e, false>(77, 93, 520, s, false, 3, {.lda = 528, .ldb = 99, .ldc = 96});
  }
}

}  // namespace
