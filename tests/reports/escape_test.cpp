#include "reports/escape.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <random>

#include "csv_parser.hpp"

namespace ktune::reports {
namespace {

TEST(Escape, HtmlEscapesEveryMarkupCharacter) {
  EXPECT_EQ(html("<a href=\"x\">Tom & 'Jerry'</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;");
  EXPECT_EQ(html("Ωμέγα 卡"), "Ωμέγα 卡");
}

TEST(Escape, JsonForScriptLeavesNoTagOrLineSeparator) {
  const std::string json = nlohmann::json{{"k", "</script><!-- & \xE2\x80\xA8 \xE2\x80\xA9 >"}}.dump();
  const std::string safe = json_for_script(json);
  for (const char* bad : {"<", ">", "&", "\xE2\x80\xA8", "\xE2\x80\xA9"}) {
    EXPECT_EQ(safe.find(bad), std::string::npos) << bad;
  }
  EXPECT_EQ(nlohmann::json::parse(safe), nlohmann::json::parse(json));  // same value after escaping
}

TEST(Escape, JsonStringRoundTripsRandomText) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) text += static_cast<char>(1 + rng() % 127);  // every ASCII but NUL
    text += "é\xE2\x80\xA8";
    std::string out;
    append_json_string(out, text);
    EXPECT_EQ(nlohmann::json::parse(out).get<std::string>(), text);
  }
}

TEST(Escape, SanitizeUtf8ReplacesOnlyInvalidSequences) {
  EXPECT_EQ(sanitize_utf8("ok Ω 卡 😀"), "ok Ω 卡 😀");
  EXPECT_EQ(sanitize_utf8("a\xFF"
                          "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(sanitize_utf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // truncated
}

TEST(Escape, CsvFieldsParseBackWithAnIndependentReader) {
  std::mt19937 rng(11);
  const std::string alphabet = "ab,\"\r\n x;Ω";
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::string> fields(1 + rng() % 5);
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) {
      const int n = 1 + static_cast<int>(rng() % 12);
      for (int j = 0; j < n; ++j) fields[i] += alphabet[rng() % alphabet.size()];
      if (i > 0) line += ',';
      append_csv_field(line, fields[i]);
    }
    line += "\r\n";
    const testing::CsvTable table = testing::parse_csv(line);
    ASSERT_EQ(table.size(), 1u) << line;
    EXPECT_EQ(table[0], fields);
  }
}

TEST(Escape, MarkdownCellKeepsTheTableIntact) {
  EXPECT_EQ(markdown_cell("a|b\\c\n<i>"), "a\\|b\\\\c &lt;i&gt;");
}

}  // namespace
}  // namespace ktune::reports
