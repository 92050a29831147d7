#pragma once
/// JSON: one document with the header (version, filter, GPUs with ceilings, runs), every listed
/// measurement with its derived values, and the winners per key. Written as a stream, so a
/// 100,000-row report never builds a JSON tree. docs/reports.md gives the layout.

#include "reports/reporter.hpp"

namespace ktune::reports {

class JsonReporter final : public Reporter {
 public:
  void write(const ReportData& data, std::ostream& out) const override;
};

}  // namespace ktune::reports
