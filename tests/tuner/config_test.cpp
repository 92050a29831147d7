#include "core/config.hpp"

#include <gtest/gtest.h>

#include "ktune/error.hpp"
#include "tuner/space/canonical_name.hpp"

namespace ktune::tuner {
namespace {

TEST(Config, JsonRoundTripKeepsOrderAndValues) {
  const Config c("tiled", {{"BLOCK_N", 96}, {"BLOCK_M", 48}, {"SPLIT_K", 3}});
  const std::string text = c.to_json_text();
  EXPECT_EQ(text, R"({"template":"tiled","params":{"BLOCK_N":96,"BLOCK_M":48,"SPLIT_K":3}})");
  EXPECT_EQ(Config::from_json_text(text), c);
  EXPECT_EQ(c.at("BLOCK_M"), 48);
  EXPECT_FALSE(c.find("WARPS").has_value());
  EXPECT_THROW(c.at("WARPS"), Error);
}

TEST(Config, FromJsonRejectsBadInput) {
  for (const char* bad :
       {"[1,2]", R"({"params":{}})", R"({"template":"t","params":{"A":1.5}})", "{not json"}) {
    try {
      Config::from_json_text(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    }
  }
}

TEST(CanonicalName, ExpandsPatternWithKernelDtypeLayout) {
  const Config c("tiled", {{"BLOCK_M", 128},
                           {"BLOCK_N", 64},
                           {"BLOCK_K", 32},
                           {"WARPS_M", 2},
                           {"WARPS_N", 2},
                           {"STAGES", 3},
                           {"SPLIT_K", 1}});
  const char* pattern = "{BLOCK_M}x{BLOCK_N}x{BLOCK_K}.w{WARPS_M}x{WARPS_N}.s{STAGES}.sk{SPLIT_K}";
  EXPECT_EQ(canonical_name("gemm", DType::kBF16, "nt", pattern, c), "gemm.bf16.nt.128x64x32.w2x2.s3.sk1");
  EXPECT_EQ(canonical_name("gemm", DType::kF32, "", pattern, c), "gemm.f32.128x64x32.w2x2.s3.sk1");
}

TEST(CanonicalName, PatternChecks) {
  const std::vector<std::string> params{"A", "B"};
  EXPECT_EQ(check_name_pattern("a{A}.b{B}", params), "");
  EXPECT_NE(check_name_pattern("{A}{B}", params), "");   // ambiguous: 1,12 vs 11,2
  EXPECT_NE(check_name_pattern("{A}-{B}", params), "");  // '-' is not a separator (negative values)
  EXPECT_NE(check_name_pattern("{A}", params), "");      // B missing
  EXPECT_NE(check_name_pattern("{A}x{C}.{B}", params), "");
  EXPECT_NE(check_name_pattern("{A}x{B", params), "");
  EXPECT_NE(check_name_pattern("{A}x}{B}", params), "");
}

}  // namespace
}  // namespace ktune::tuner
