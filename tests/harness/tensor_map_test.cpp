// unit: the checks of a TMA tensor map that need no driver (harness/tensor_map.hpp): what can be
// encoded, and the reason when it cannot.

#include <gtest/gtest.h>

#include <string>

#include "harness/tensor_map.hpp"

namespace ktune::harness {
namespace {

TEST(TensorMap, AcceptsTheWgmmaBoxesAndSaysWhyNot) {
  // A [M, K] bf16 operand read in 128 x 64 boxes (128-byte rows: the swizzle's width).
  EXPECT_EQ(std::string(tensor_map_rejection({DType::kBF16, 4096, 4096, 128, 64})), "");
  EXPECT_EQ(std::string(tensor_map_rejection({DType::kF16, 77, 520, 256, 64})), "");
  EXPECT_EQ(std::string(tensor_map_rejection({DType::kF32, 10, 32, 8, 32})), "");
  // K = 100 bf16: 200-byte rows, not a multiple of 16.
  EXPECT_NE(std::string(tensor_map_rejection({DType::kBF16, 128, 100, 128, 64})).find("16 bytes"),
            std::string::npos);
  // 128 bf16 columns are 256 bytes: wider than the swizzle.
  EXPECT_NE(std::string(tensor_map_rejection({DType::kBF16, 128, 1024, 128, 128})).find("128-byte"),
            std::string::npos);
  EXPECT_NE(std::string(tensor_map_rejection({DType::kBF16, 1024, 1024, 512, 64})).find("[1, 256]"),
            std::string::npos);
  // fp8: 1-byte elements, 128 of them fill the swizzle row; 129 do not, nor do 100-byte rows.
  EXPECT_EQ(std::string(tensor_map_rejection({DType::kFP8E4M3, 128, 4096, 128, 128})), "");
  EXPECT_NE(std::string(tensor_map_rejection({DType::kFP8E4M3, 128, 4096, 128, 129})).find("128-byte"),
            std::string::npos);
  EXPECT_NE(std::string(tensor_map_rejection({DType::kFP8E5M2, 128, 100, 64, 64})).find("16 bytes"),
            std::string::npos);
  EXPECT_NE(std::string(tensor_map_rejection({DType::kBF16, 0, 128, 64, 64})), "");
}

}  // namespace
}  // namespace ktune::harness

namespace ktune::harness {
namespace {

TEST(TensorMap, FromTheArgumentFormKeepsEveryField) {
  // {rows, cols, box_rows, box_cols} as KernelArg and ArgSpec carry it; rows past 32 bits survive.
  const TensorMap2d m = tensor_map_2d(DType::kF16, {int64_t{5} << 32, 4104, 192, 64});
  EXPECT_EQ(m.dtype, DType::kF16);
  EXPECT_EQ(m.rows, uint64_t{5} << 32);
  EXPECT_EQ(m.cols, 4104u);
  EXPECT_EQ(m.box_rows, 192u);
  EXPECT_EQ(m.box_cols, 64u);
}

}  // namespace
}  // namespace ktune::harness

namespace ktune::harness {
namespace {

TEST(TensorMap, AStridedViewNeedsRowsOf16BytesAndNoShorterThanTheRow) {
  // A column slice of a wider bf16 buffer: K = 520 columns of rows 1560 apart (3120 bytes).
  TensorMap2d a = tensor_map_2d(DType::kBF16, {200, 520, 128, 64}, 1560);
  EXPECT_EQ(a.stride(), 1560u);
  EXPECT_EQ(std::string(tensor_map_rejection(a)), "");
  EXPECT_EQ(tensor_map_2d(DType::kBF16, {200, 520, 128, 64}).stride(), 520u);  // 0: contiguous
  // Rows 1561 bf16 apart are 3122 bytes: not a multiple of 16, even though K is.
  a.row_stride = 1561;
  EXPECT_NE(std::string(tensor_map_rejection(a)).find("16 bytes"), std::string::npos);
  a.row_stride = 512;
  EXPECT_NE(std::string(tensor_map_rejection(a)).find("shorter than the row"), std::string::npos);
  // Only the stride must be a multiple of 16 bytes: 100 columns in rows of 104 are fine.
  EXPECT_EQ(std::string(tensor_map_rejection(tensor_map_2d(DType::kBF16, {64, 100, 64, 64}, 104))), "");
}

}  // namespace
}  // namespace ktune::harness
