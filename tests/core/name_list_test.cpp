#include "core/name_list.hpp"

#include <gtest/gtest.h>

namespace ktune {
namespace {

TEST(NameList, JoinsWithOrBeforeTheLast) {
  EXPECT_EQ(name_list({}), "");
  EXPECT_EQ(name_list({"csv"}), "csv");
  EXPECT_EQ(name_list({"csv", "json"}), "csv or json");
  EXPECT_EQ(name_list({"exhaustive", "random", "halving", "model"}), "exhaustive, random, halving or model");
}

}  // namespace
}  // namespace ktune
