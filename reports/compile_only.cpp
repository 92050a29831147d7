#include "reports/compile_only.hpp"

namespace ktune::reports {

bool compile_only_kernel(const ReportData& data, std::string_view kernel) {
  bool compile_only = false;
  for (const ReportKey& key : data.keys) {
    if (key.kernel != kernel) continue;
    for (const size_t r : key.rows) {
      const cache::Measurement& m = data.rows[r].stored.m;
      switch (m.outcome) {
        case Outcome::kSkipped:
          compile_only = compile_only || m.reason == "compile-only";
          break;
        case Outcome::kCompileError:
        case Outcome::kExceedsLimits:
          break;
        default:
          return false;  // something ran on a GPU (or was meant to)
      }
    }
  }
  return compile_only;
}

}  // namespace ktune::reports

namespace ktune::reports {

std::string_view no_winner_note(const ReportData& data, std::string_view kernel) {
  for (const ReportKey& key : data.keys) {
    if (key.kernel == kernel && key.winner) return {};
  }
  return compile_only_kernel(data, kernel) ? kCompileOnlyNote : kNothingRanNote;
}

}  // namespace ktune::reports
