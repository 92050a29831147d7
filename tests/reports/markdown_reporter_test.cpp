#include "reports/markdown_reporter.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "report_fixture.hpp"

namespace ktune::reports {
namespace {

TEST(MarkdownReporter, OneTableRowPerWinnerAndHostileTextEscaped) {
  const testing::Fixture f = testing::make_fixture({.seed = 51, .hostile = true});
  const ReportData data = testing::build(f);
  std::ostringstream out;
  MarkdownReporter().write(data, out);
  const std::string text = out.str();
  EXPECT_TRUE(text.starts_with("# ktune report\n"));
  for (const std::string& kernel : data.kernels) EXPECT_NE(text.find("## "), std::string::npos) << kernel;
  // Winner rows start with the shape in backticks; so do the rows of the counters tables that
  // follow a "Counters of the winners:" line, up to the next blank line after their table.
  size_t rows = 0;
  size_t counter_rows = 0;
  bool in_counters = false;
  bool in_table = false;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line == "Counters of the winners:") in_counters = true;
    if (line.starts_with("|")) in_table = true;
    if (line.empty() && in_table) in_counters = in_table = false;
    if (line.starts_with("| `")) ++(in_counters ? counter_rows : rows);
  }
  EXPECT_EQ(rows, f.best_ids.size());
  // Every winner whose counters the fixture recorded has a counters row (kernels where none did have no
  // table).
  size_t with_counters = 0;
  for (const ReportKey& key : data.keys) {
    if (key.winner && data.rows[*key.winner].stored.m.counters_json != "{}") ++with_counters;
  }
  EXPECT_GE(counter_rows, with_counters);
  EXPECT_LE(counter_rows, f.best_ids.size());
  EXPECT_EQ(text.find("<img"), std::string::npos);
  EXPECT_EQ(text.find("<script"), std::string::npos);
  EXPECT_NE(text.find("Outcomes: ok "), std::string::npos);
}

}  // namespace
}  // namespace ktune::reports
