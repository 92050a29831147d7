// A cuBLASLt algorithm as a config (harness/cublaslt_algorithm.hpp): every attribute survives the
// round trip through the config and its stored JSON text, the name carries the library version, and
// configs that are not library algorithms, or whose values do not fit the attribute, are refused.

#include "harness/cublaslt_algorithm.hpp"

#include <gtest/gtest.h>

#include <random>

#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

CublasLtAlgorithm random_algorithm(std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> small(0, 60);
  CublasLtAlgorithm a;
  a.version = 130000 + small(rng);
  a.id = static_cast<int32_t>(small(rng));
  a.tile = static_cast<uint32_t>(small(rng));
  a.stages = static_cast<uint32_t>(small(rng));
  a.split_k = static_cast<int32_t>(1 + small(rng) % 16);
  a.reduction = static_cast<uint32_t>(small(rng) % 5);
  a.swizzle = static_cast<uint32_t>(small(rng) % 2);
  a.custom = static_cast<uint32_t>(small(rng) % 7);
  a.inner = static_cast<uint16_t>(small(rng));
  a.cluster = static_cast<uint16_t>(small(rng));
  return a;
}

TEST(CublasLtAlgorithm, RoundTripsThroughConfigAndStoredJson) {
  std::mt19937_64 rng(20261202);
  for (int i = 0; i < 50; ++i) {
    const CublasLtAlgorithm a = random_algorithm(rng);
    const Config c = a.to_config();
    EXPECT_TRUE(is_cublaslt_config(c));
    EXPECT_EQ(CublasLtAlgorithm::from_config(c), a);
    EXPECT_EQ(CublasLtAlgorithm::from_config(Config::from_json_text(c.to_json_text())), a);
  }
}

TEST(CublasLtAlgorithm, NameCarriesVersionAndEveryAttribute) {
  CublasLtAlgorithm a;
  a.version = 130100;
  a.id = 66;
  a.tile = 23;
  a.stages = 19;
  a.split_k = 4;
  a.reduction = 2;
  a.swizzle = 1;
  a.custom = 3;
  a.inner = 5;
  a.cluster = 7;
  EXPECT_EQ(a.name_suffix(), "v130100.a66.t23.s19.k4.r2.w1.c3.i5.x7");
  CublasLtAlgorithm b = a;
  b.version = 130200;
  EXPECT_NE(a.name_suffix(), b.name_suffix()) << "another library version must name another config";
}

TEST(CublasLtAlgorithm, RefusesOtherTemplatesAndOutOfRangeValues) {
  EXPECT_FALSE(is_cublaslt_config(Config("tiled", {{"BLOCK_M", 64}})));
  EXPECT_THROW(CublasLtAlgorithm::from_config(Config("tiled", {{"BLOCK_M", 64}})), Error);
  std::mt19937_64 rng(7);
  Config c = random_algorithm(rng).to_config();
  c.set("INNER", 70000);  // a uint16 attribute
  EXPECT_THROW(CublasLtAlgorithm::from_config(c), Error);
  c = random_algorithm(rng).to_config();
  c.set("SPLIT_K", 0);
  EXPECT_THROW(CublasLtAlgorithm::from_config(c), Error);
  c = random_algorithm(rng).to_config();
  c.erase("TILE");
  try {
    CublasLtAlgorithm::from_config(c);
    FAIL() << "a config without TILE was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TILE"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::harness
