#pragma once
/// CSV (RFC 4180, CRLF line ends): one row a measurement, one column each for every config
/// parameter (`param_<name>`), shape dimension (`dim_<name>`) and counter (`counter_<name>`),
/// so `pandas.read_csv` gives typed columns at once. docs/reports.md lists the columns.

#include "reports/reporter.hpp"

namespace ktune::reports {

class CsvReporter final : public Reporter {
 public:
  void write(const ReportData& data, std::ostream& out) const override;
};

}  // namespace ktune::reports
