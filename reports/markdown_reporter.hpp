#pragma once
/// Markdown: a short summary for a terminal or a pull request — the GPUs, then per kernel the
/// winners with speed-up and % of roofline, and the outcome counts.

#include "reports/reporter.hpp"

namespace ktune::reports {

class MarkdownReporter final : public Reporter {
 public:
  void write(const ReportData& data, std::ostream& out) const override;
};

}  // namespace ktune::reports
