#include "reports/report_loader.hpp"

#include <chrono>
#include <unordered_map>
#include <unordered_set>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "reports/report_builder.hpp"

namespace ktune::reports {

const char* ktune_version() { return KTUNE_VERSION_STRING; }

ReportData load_report_data(const cache::ConfigCache& db, const ReportQuery& query) {
  ReportData meta;
  meta.ktune_version = ktune_version();
  meta.generated_at =
      fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                  std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now()));
  meta.db_path = db.path().string();
  meta.filter = query.filter;
  meta.winners_only = query.winners_only;
  ReportBuilder builder(std::move(meta));

  // RunInfo carries no id: a run is matched to its measurements by its start time.
  std::unordered_map<std::string, cache::RunInfo> runs_by_start;
  for (const cache::RunInfo& run : db.runs()) runs_by_start.try_emplace(run.started_at, run);
  std::unordered_set<int64_t> runs_added;
  db.for_each_measurement(query.filter, [&](const cache::StoredMeasurement& m) {
    if (runs_added.insert(m.run_id).second) {
      const auto it = runs_by_start.find(m.run_started_at);
      if (it != runs_by_start.end()) builder.add_run(m.run_id, it->second);
    }
    builder.add(m);
  });
  for (const cache::BestConfig& best : db.list_best(query.filter)) builder.mark_best(best.measurement_id);
  return builder.finish();
}

}  // namespace ktune::reports
