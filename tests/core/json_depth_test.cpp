// The JSON nesting bound (core/json_depth.hpp): random documents are measured at their true depth
// (checked against nlohmann's own parse), brackets inside strings and escaped quotes do not count,
// the scan stops just past the limit on a document a million levels deep, and a config given as
// JSON text past the bound is bad input naming the bound.
#include "core/json_depth.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config.hpp"
#include "ktune/error.hpp"

namespace ktune {
namespace {

/// The depth of a parsed document, walked independently of the scanner.
int depth_of(const nlohmann::json& j) {
  if (!j.is_structured()) return 0;
  int deepest = 0;
  for (const auto& v : j) deepest = std::max(deepest, depth_of(v));
  return deepest + 1;
}

/// A random document of at most `levels` levels, with strings that hold brackets and escapes.
nlohmann::json random_json(std::mt19937_64& rng, int levels) {
  static const char* const kTricky[] = {"[", "{{", "]}", "\"[", "\\\\", "a\"]b", "plain"};
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  if (levels == 0 || pick(4) == 0) {
    switch (pick(3)) {
      case 0:
        return static_cast<int64_t>(rng() % 1000);
      case 1:
        return std::string(kTricky[pick(7)]);
      default:
        return nullptr;
    }
  }
  nlohmann::json out = pick(2) == 0 ? nlohmann::json::array() : nlohmann::json::object();
  const int n = 1 + pick(3);
  for (int i = 0; i < n; ++i) {
    if (out.is_array()) {
      out.push_back(random_json(rng, levels - 1));
    } else {
      out[std::string(kTricky[pick(7)]) + std::to_string(i)] = random_json(rng, levels - 1);
    }
  }
  return out;
}

TEST(JsonDepth, MatchesTheParsedDepthOfRandomDocuments) {
  std::mt19937_64 rng(std::random_device{}());
  for (int i = 0; i < 300; ++i) {
    const nlohmann::json doc = random_json(rng, 1 + static_cast<int>(rng() % 12));
    const std::string text = doc.dump();
    EXPECT_EQ(json_nesting_depth(text, 100), depth_of(doc)) << text;
  }
}

TEST(JsonDepth, StringsAndEscapesDoNotCount) {
  EXPECT_EQ(json_nesting_depth(R"({"a": "[[[[{{{{"})"), 1);
  EXPECT_EQ(json_nesting_depth(R"(["\"[[[", ["x"]])"), 2);
  EXPECT_EQ(json_nesting_depth(R"(["\\", [["\\\"]"]]])"), 3);
  EXPECT_EQ(json_nesting_depth("42"), 0);
  EXPECT_EQ(json_nesting_depth(""), 0);
}

TEST(JsonDepth, StopsJustPastTheLimit) {
  const std::string at_limit = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_EQ(json_nesting_depth(at_limit), kMaxJsonDepth);
  EXPECT_TRUE(json_depth_ok(at_limit));
  const std::string deep(1'000'000, '[');
  EXPECT_EQ(json_nesting_depth(deep), kMaxJsonDepth + 1);
  EXPECT_FALSE(json_depth_ok(deep));
  EXPECT_FALSE(json_depth_ok("[" + at_limit + "]"));
}

TEST(JsonDepth, ConfigTextPastTheBoundIsBadInput) {
  std::string deep = R"({"template":"tiled","params":{"BLOCK_M":)";
  for (int i = 0; i < 100'000; ++i) deep += '[';
  try {
    (void)Config::from_json_text(deep);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find(std::to_string(kMaxJsonDepth)), std::string::npos) << e.what();
  }
  EXPECT_EQ(Config::from_json_text(R"({"template":"tiled","params":{"BLOCK_M":64}})").at("BLOCK_M"), 64);
}

}  // namespace
}  // namespace ktune
