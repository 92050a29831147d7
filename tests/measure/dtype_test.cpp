#include "core/dtype.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "ktune/error.hpp"

namespace ktune::measure {
namespace {

TEST(DType, NamesRoundTripAndSizes) {
  for (DType d : kDTypes) {
    EXPECT_EQ(dtype_from_string(to_string(d)), d);
    EXPECT_EQ(find_dtype(to_string(d)), d);
  }
  EXPECT_EQ(size_of(DType::kF32), 4U);
  EXPECT_EQ(size_of(DType::kBF16), 2U);
  EXPECT_EQ(size_of(DType::kFP8E4M3), 1U);
  EXPECT_EQ(find_dtype("f64"), std::nullopt);
  EXPECT_EQ(find_dtype(""), std::nullopt);
  try {
    dtype_from_string("f64");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_STREQ(e.what(), "unknown dtype 'f64' (known: f32, f16, bf16, fp8e4m3, fp8e5m2)");
  }
  EXPECT_EQ(dtype_names(kDTypes), "f32, f16, bf16, fp8e4m3, fp8e5m2");
  EXPECT_EQ(dtype_names(std::vector{DType::kF16, DType::kBF16}, ","), "f16,bf16");
}

TEST(DType, HalfDecodingHandWorked) {
  EXPECT_EQ(decode_f16(0x3C00), 1.0);
  EXPECT_EQ(decode_f16(0xC000), -2.0);
  EXPECT_EQ(decode_f16(0x7BFF), 65504.0);
  EXPECT_EQ(decode_f16(0x0001), std::ldexp(1.0, -24));                 // smallest subnormal
  EXPECT_EQ(decode_f16(0x3555), 0x155 * std::ldexp(1.0, -12) + 0.25);  // 0.333251953125
  EXPECT_TRUE(std::isinf(decode_f16(0x7C00)));
  EXPECT_TRUE(std::isnan(decode_f16(0xFFFF)));  // poison pattern
}

TEST(DType, Bf16AndFp8DecodingHandWorked) {
  EXPECT_EQ(decode_bf16(0x3F80), 1.0);
  EXPECT_EQ(decode_bf16(0xC0A0), -5.0);
  EXPECT_TRUE(std::isnan(decode_bf16(0xFFFF)));
  EXPECT_EQ(decode_fp8e4m3(0x38), 1.0);                  // 0 0111 000
  EXPECT_EQ(decode_fp8e4m3(0x7E), 448.0);                // largest finite
  EXPECT_EQ(decode_fp8e4m3(0x01), std::ldexp(1.0, -9));  // smallest subnormal
  EXPECT_EQ(decode_fp8e4m3(0xC4), -3.0);                 // 1 1000 100 = -1.5 * 2
  EXPECT_TRUE(std::isnan(decode_fp8e4m3(0xFF)));
  EXPECT_EQ(decode_fp8e5m2(0x3C), 1.0);
  EXPECT_EQ(decode_fp8e5m2(0x7B), 57344.0);
  EXPECT_TRUE(std::isinf(decode_fp8e5m2(0x7C)));
  EXPECT_TRUE(std::isnan(decode_fp8e5m2(0xFF)));
}

TEST(DType, DecodeBuffer) {
  const std::vector<float> f{1.5f, -0.25f, 3.0f};
  std::vector<std::byte> bytes(12);
  std::memcpy(bytes.data(), f.data(), 12);
  const auto d = decode(DType::kF32, bytes);
  ASSERT_EQ(d.size(), 3U);
  EXPECT_EQ(d[1], -0.25);
  EXPECT_THROW(decode(DType::kF32, std::span(bytes).first(5)), Error);
}

}  // namespace
}  // namespace ktune::measure
