// The CPU float64 gemm reference against products worked by hand (D4: a wrong reference must not
// bless a wrong kernel).
#include "kernel_templates/gemm/reference_gemm.hpp"

#include <gtest/gtest.h>

#include <random>

#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

// A [2,3] = [[1, 2, 3], [4, 5, 6]]; B as [K=3, N=2] ("nn") = [[7, 8], [9, 10], [11, 12]].
// C[0][0] = 1*7 + 2*9 + 3*11 = 58      C[0][1] = 1*8 + 2*10 + 3*12 = 64
// C[1][0] = 4*7 + 5*9 + 6*11 = 139     C[1][1] = 4*8 + 5*10 + 6*12 = 154
const std::vector<double> kA = {1, 2, 3, 4, 5, 6};
const std::vector<double> kBnn = {7, 8, 9, 10, 11, 12};
const std::vector<double> kBnt = {7, 9, 11, 8, 10, 12};  // the same B as [N=2, K=3]
const std::vector<double> kC = {58, 64, 139, 154};

TEST(ReferenceGemm, HandWorkedIntegersNN) {
  EXPECT_EQ(gemm_reference_f64(kA, kBnn, 2, 2, 3, GemmLayout::kNN), kC);
}

TEST(ReferenceGemm, HandWorkedIntegersNT) {
  EXPECT_EQ(gemm_reference_f64(kA, kBnt, 2, 2, 3, GemmLayout::kNT), kC);
}

TEST(ReferenceGemm, HandWorkedFractionsAndSigns) {
  // A [1,2] = [[0.5, -1.25]]; B [K=2, N=3] = [[2, -4, 0.75], [-3, 1.5, 8]].
  // C = [0.5*2 + (-1.25)(-3), 0.5(-4) + (-1.25)(1.5), 0.5(0.75) + (-1.25)(8)] = [4.75, -3.875, -9.625]
  const std::vector<double> a = {0.5, -1.25};
  const std::vector<double> b_nn = {2, -4, 0.75, -3, 1.5, 8};
  const std::vector<double> b_nt = {2, -3, -4, 1.5, 0.75, 8};
  const std::vector<double> c = {4.75, -3.875, -9.625};
  EXPECT_EQ(gemm_reference_f64(a, b_nn, 1, 3, 2, GemmLayout::kNN), c);
  EXPECT_EQ(gemm_reference_f64(a, b_nt, 1, 3, 2, GemmLayout::kNT), c);
}

TEST(ReferenceGemm, HandWorkedSplitsOfK) {
  // The example above split as K = [0,1) + [1,3): C[0][0] = 1*7 = 7 plus 2*9 + 3*11 = 51;
  // C[1][1] = 4*8 = 32 plus 5*10 + 6*12 = 122.
  const auto first = gemm_reference_f64_range(kA, kBnn, 2, 2, 3, GemmLayout::kNN, 0, 1);
  const auto rest = gemm_reference_f64_range(kA, kBnt, 2, 2, 3, GemmLayout::kNT, 1, 3);
  EXPECT_EQ(first, (std::vector<double>{7, 8, 28, 32}));
  EXPECT_EQ(rest, (std::vector<double>{51, 56, 111, 122}));
  for (std::size_t i = 0; i < kC.size(); ++i) EXPECT_EQ(first[i] + rest[i], kC[i]);
  // Three chunks [0,1) [1,2) [2,3): the middle one is 2*9, 2*10, 5*9, 5*10.
  EXPECT_EQ(gemm_reference_f64_range(kA, kBnn, 2, 2, 3, GemmLayout::kNN, 1, 2),
            (std::vector<double>{18, 20, 45, 50}));
  EXPECT_EQ(gemm_reference_f64_range(kA, kBnn, 2, 2, 3, GemmLayout::kNN, 2, 2),
            (std::vector<double>(4, 0.0)));
}

TEST(ReferenceGemm, LayoutsAgreeOnRandomData) {
  // nt with B' equals nn with B'^T; the split sums equal the whole. Random, never zero.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mag(0.25, 1.0);
  const int64_t m = 5, n = 7, k = 11;
  std::vector<double> a(m * k), b_nt(n * k), b_nn(k * n);
  for (auto& v : a) v = (rng() & 1 ? 1 : -1) * mag(rng);
  for (auto& v : b_nt) v = (rng() & 1 ? 1 : -1) * mag(rng);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < k; ++p) b_nn[p * n + j] = b_nt[j * k + p];
  }
  const auto c_nt = gemm_reference_f64(a, b_nt, m, n, k, GemmLayout::kNT);
  const auto c_nn = gemm_reference_f64(a, b_nn, m, n, k, GemmLayout::kNN);
  ASSERT_EQ(c_nt.size(), static_cast<std::size_t>(m * n));
  const auto s1 = gemm_reference_f64_range(a, b_nt, m, n, k, GemmLayout::kNT, 0, 4);
  const auto s2 = gemm_reference_f64_range(a, b_nt, m, n, k, GemmLayout::kNT, 4, 9);
  const auto s3 = gemm_reference_f64_range(a, b_nt, m, n, k, GemmLayout::kNT, 9, 11);
  for (std::size_t i = 0; i < c_nt.size(); ++i) {
    EXPECT_EQ(c_nt[i], c_nn[i]);
    EXPECT_NEAR(s1[i] + s2[i] + s3[i], c_nt[i], 1e-12);
    EXPECT_NE(c_nt[i], 0.0);
  }
}

TEST(ReferenceGemm, RejectsMismatchedSizes) {
  try {
    gemm_reference_f64(kA, kBnn, 2, 2, 4, GemmLayout::kNN);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
  }
  EXPECT_THROW(gemm_reference_f64_range(kA, kBnn, 2, 2, 3, GemmLayout::kNN, 2, 4), Error);
  EXPECT_THROW(gemm_reference_f64(kA, kBnn, 0, 2, 3, GemmLayout::kNN), Error);
}

}  // namespace
}  // namespace ktune::kernel_templates
