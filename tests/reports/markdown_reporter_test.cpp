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
  // Table rows: header + separator + one per winner in each kernel section, plus the GPU table.
  size_t rows = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("| `")) ++rows;  // winner rows start with the shape in backticks
  }
  EXPECT_EQ(rows, f.best_ids.size());
  EXPECT_EQ(text.find("<img"), std::string::npos);
  EXPECT_EQ(text.find("<script"), std::string::npos);
  EXPECT_NE(text.find("Outcomes: ok "), std::string::npos);
}

}  // namespace
}  // namespace ktune::reports
