// The input fills and the integer comparison on the device (core/buffer_fill.hpp,
// measure/random_fill.hpp, measure/gpu_compare.hpp): each fill's values, downloaded, are the ones
// its definition gives (a sequence and a pattern element by element, a range within its bounds
// and spread over them), the same seed gives the same values, and integer outputs compare
// exactly. Skips without a GPU.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/dtype.hpp"
#include "gpu_availability.hpp"
#include "harness/context.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "measure/gpu_compare.hpp"
#include "measure/random_fill.hpp"
#include "measure/utility_kernels.hpp"

namespace ktune::measure {
namespace fill_gpu_test {  // named: the unity build batches this file with others

#define SKIP_WITHOUT_GPU()                                        \
  do {                                                            \
    const std::string why_ = test::no_gpu_reason();               \
    if (!why_.empty()) GTEST_SKIP() << "no usable GPU: " << why_; \
  } while (0)

struct Device {
  harness::PrimaryContext context{0};
  UtilityKernels kernels{harness::query_device(0).arch()};
};

/// Fills a fresh buffer of `count` elements and downloads its bytes.
template <typename T>
std::vector<T> filled(const Device& d, DType dtype, std::optional<IntType> integer, uint64_t count,
                      const BufferFill& fill, uint64_t seed) {
  harness::DeviceBuffer b(count * sizeof(T));
  fill_buffer(d.kernels, b.get(), dtype, integer, count, fill, seed, nullptr);
  KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(nullptr));
  return b.download_as<T>(count);
}

TEST(FillGpu, ASequenceIsStartPlusIStepModuloElementByElement) {
  SKIP_WITHOUT_GPU();
  Device d;
  const uint64_t n = 100003;  // not a multiple of the block
  const auto i32 = filled<int32_t>(d, DType::kF32, IntType::kI32, n, BufferFill::sequence(-7, 13, 977), 1);
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t want = (((-7 + static_cast<int64_t>(i) * 13) % 977) + 977) % 977;
    ASSERT_EQ(i32[i], want) << i;
  }
  const auto i64 = filled<int64_t>(d, DType::kF32, IntType::kI64, n,
                                   BufferFill::sequence(int64_t{1} << 40, -3, std::nullopt), 1);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(i64[i], (int64_t{1} << 40) - 3 * static_cast<int64_t>(i)) << i;
  const auto u8 = filled<uint8_t>(d, DType::kF32, IntType::kU8, n, BufferFill::sequence(0, 1, 256), 1);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(u8[i], i % 256) << i;
}

TEST(FillGpu, APatternRepeatsItsValuesAndKeepsItsZeros) {
  SKIP_WITHOUT_GPU();
  Device d;
  const std::vector<double> pattern{1.0, -0.5, 0.0, 2.0, 3.0};
  const uint64_t n = 4099;
  const auto f32 = filled<float>(d, DType::kF32, std::nullopt, n, BufferFill::repeat(pattern), 1);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(f32[i], static_cast<float>(pattern[i % 5])) << i;
  // f16: the values are exact in f16; decode the bits.
  const auto f16 = filled<uint16_t>(d, DType::kF16, std::nullopt, n, BufferFill::repeat(pattern), 1);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(decode_f16(f16[i]), pattern[i % 5]) << i;
  const auto i32 = filled<int32_t>(d, DType::kF32, IntType::kI32, n, BufferFill::repeat({3, -9, 0}), 1);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(i32[i], (std::vector<int32_t>{3, -9, 0})[i % 3]) << i;
}

TEST(FillGpu, ARangeStaysInItsBoundsSpreadsOverThemAndFollowsTheSeed) {
  SKIP_WITHOUT_GPU();
  Device d;
  const uint64_t n = 1 << 18;
  const auto ids = filled<int32_t>(d, DType::kF32, IntType::kI32, n, BufferFill::range(5, 104), 42);
  std::set<int32_t> seen(ids.begin(), ids.end());
  EXPECT_EQ(*seen.begin(), 5);  // both ends included, every value hit over 2^18 draws
  EXPECT_EQ(*seen.rbegin(), 104);
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(filled<int32_t>(d, DType::kF32, IntType::kI32, n, BufferFill::range(5, 104), 42), ids);
  EXPECT_NE(filled<int32_t>(d, DType::kF32, IntType::kI32, n, BufferFill::range(5, 104), 43), ids);

  const auto x = filled<float>(d, DType::kF32, std::nullopt, n, BufferFill::range(-2.0, 3.0), 7);
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  EXPECT_GE(*lo, -2.0f);
  EXPECT_LT(*lo, -1.99f);
  EXPECT_LT(*hi, 3.0f);
  EXPECT_GT(*hi, 2.99f);
  const auto bf16 = filled<uint16_t>(d, DType::kBF16, std::nullopt, n, BufferFill::range(-2.0, 3.0), 7);
  for (uint16_t bits : bf16) {
    const double v = decode_bf16(bits);
    ASSERT_TRUE(v >= -2.0 && v < 3.0) << v;
  }
}

TEST(FillGpu, IntegerOutputsCompareExactly) {
  SKIP_WITHOUT_GPU();
  Device d;
  const uint64_t n = 70001;
  std::vector<int64_t> ref(n);
  for (uint64_t i = 0; i < n; ++i) ref[i] = static_cast<int64_t>(i * 2654435761ULL % 100000) - 50000;
  std::vector<int64_t> out = ref;
  harness::DeviceBuffer dr = harness::DeviceBuffer::from_host(std::span<const int64_t>(ref));
  harness::DeviceBuffer same = harness::DeviceBuffer::from_host(std::span<const int64_t>(out));
  EXPECT_EQ(gpu_compare(d.kernels, same.get(), dr.get(), IntType::kI64, n, nullptr).max_abs_err, 0);
  out[n - 1] += 1;  // one element, the last one
  harness::DeviceBuffer off = harness::DeviceBuffer::from_host(std::span<const int64_t>(out));
  const ErrorMetrics m = gpu_compare(d.kernels, off.get(), dr.get(), IntType::kI64, n, nullptr);
  EXPECT_EQ(m.max_abs_err, 1);
  EXPECT_EQ(m.count, n);
}

}  // namespace fill_gpu_test
}  // namespace ktune::measure
