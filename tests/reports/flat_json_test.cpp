#include "reports/flat_json.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <random>

namespace ktune::reports {
namespace {

/// The reference: the same pairs through a full JSON tree.
std::vector<NamedValue> via_tree(const std::string& text) {
  std::vector<NamedValue> out;
  const nlohmann::json tree = nlohmann::json::parse(text);
  for (const auto& [name, value] : tree.items()) {
    out.emplace_back(name, value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

TEST(FlatJson, RandomFlatObjectsMatchTheTree) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    nlohmann::json object = nlohmann::json::object();
    const int n = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) {
      const std::string name = "p" + std::to_string(rng() % 20) + (rng() % 2 ? "é<" : "");
      switch (rng() % 4) {
        case 0:
          object[name] = static_cast<int64_t>(rng() % 100000) - 5000;
          break;
        case 1:
          object[name] = "v\"" + std::to_string(rng());
          break;
        case 2:
          object[name] = rng() % 2 == 0;
          break;
        default:
          object[name] = nullptr;
      }
    }
    const std::string text = object.dump();
    std::vector<NamedValue> out;
    ASSERT_TRUE(flatten_json_object(text, out)) << text;
    EXPECT_EQ(out, via_tree(text)) << text;
  }
}

TEST(FlatJson, FloatsKeepTheirTextNestedValuesBecomeJson) {
  std::vector<NamedValue> out;
  ASSERT_TRUE(flatten_json_object(R"({"b":1.50,"a":2e3})", out));
  EXPECT_EQ(out, (std::vector<NamedValue>{{"a", "2e3"}, {"b", "1.50"}}));
  ASSERT_TRUE(flatten_json_object(R"({"z":1,"tile":[128,64],"opt":{"x":true}})", out));
  EXPECT_EQ(out, (std::vector<NamedValue>{{"opt", R"({"x":true})"}, {"tile", "[128,64]"}, {"z", "1"}}));
  ASSERT_TRUE(flatten_json_object(R"({"k":1,"k":2})", out));
  EXPECT_EQ(out, (std::vector<NamedValue>{{"k", "2"}}));  // the last duplicate wins, as in a tree
}

TEST(FlatJson, AnythingButAnObjectIsRejected) {
  std::vector<NamedValue> out;
  for (const char* bad : {"", "[1,2]", "3", "\"s\"", "{\"a\":", "{\"a\":1}x", "{\"a\":\"\xFF\"}", "null"}) {
    EXPECT_FALSE(flatten_json_object(bad, out)) << bad;
    EXPECT_FALSE(is_json_object(bad)) << bad;
  }
  EXPECT_TRUE(is_json_object(" {\"a\": [1, {\"b\": 2}]} "));
}

}  // namespace
}  // namespace ktune::reports
