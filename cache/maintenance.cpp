#include <fmt/format.h>

#include "cache/config_cache.hpp"
#include "cache/detail/impl.hpp"
#include "cache/detail/schema.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {

using detail::StatementLease;

PruneStats ConfigCache::prune(const std::map<std::string, std::string>& current_hashes) {
  impl_->require_writable("prune");
  std::lock_guard lock(impl_->mu);
  detail::Database& db = impl_->db;
  detail::Transaction tx(db);
  PruneStats stats;
  for (const auto& [name, hash] : current_hashes) {
    std::vector<int64_t> stale;
    {
      StatementLease s = db.cached("SELECT id FROM kernels WHERE name = ?1 AND source_hash <> ?2");
      s->bind(1, name).bind(2, hash);
      while (s->step()) stale.push_back(s->int64(0));
    }
    for (const int64_t id : stale) {
      {
        StatementLease s = db.cached("DELETE FROM best WHERE kernel_id = ?1");
        s->bind(1, id).run();
      }
      {
        StatementLease s = db.cached("DELETE FROM measurements WHERE kernel_id = ?1");
        s->bind(1, id).run();
        stats.measurements_removed += db.changes();
      }
      StatementLease s = db.cached("DELETE FROM kernels WHERE id = ?1");
      s->bind(1, id).run();
      stats.kernels_removed += db.changes();
    }
    // Artifacts stored without a source hash cannot be judged stale and stay.
    StatementLease s = db.cached(
        "DELETE FROM compile_cache WHERE kernel_name = ?1 AND source_hash <> '' AND source_hash <> ?2");
    s->bind(1, name).bind(2, hash).run();
    stats.compile_entries_removed += db.changes();
  }
  tx.commit();
  return stats;
}

VerifyReport ConfigCache::verify() const {
  std::lock_guard lock(impl_->mu);
  detail::Database& db = impl_->db;
  VerifyReport report;
  try {
    detail::ReadSnapshot snapshot(db);
    {
      detail::Statement s(db, "PRAGMA integrity_check");
      while (s.step()) {
        if (s.text_view(0) != "ok") report.problems.push_back("integrity: " + s.text(0));
      }
    }
    for (std::string& p : detail::check_structure(db)) report.problems.push_back(std::move(p));
    if (report.problems.empty()) {
      {
        detail::Statement s(db, "PRAGMA foreign_key_check");
        while (s.step()) {
          report.problems.push_back(fmt::format("table '{}' row {} refers to a missing row of '{}'",
                                                s.text(0), s.int64(1), s.text(2)));
        }
      }
      {
        // Documented as JSON objects (docs/schema.md); another writer may have stored anything.
        detail::Statement s(
            db,
            "SELECT id FROM measurements WHERE NOT ("
            " CASE WHEN json_valid(config_json) THEN json_type(config_json) = 'object' ELSE 0 END"
            " AND CASE WHEN json_valid(counters_json) THEN json_type(counters_json) = 'object'"
            " ELSE 0 END AND CASE WHEN json_valid(resources_json)"
            " THEN json_type(resources_json) = 'object' ELSE 0 END) LIMIT 10");
        while (s.step()) {
          report.problems.push_back(
              fmt::format("measurement {} has a JSON column that is not a JSON object", s.int64(0)));
        }
      }
      detail::Statement s(db,
                          "SELECT b.shape, b.dtype, b.measurement_id, m.outcome FROM best b"
                          " JOIN measurements m ON m.id = b.measurement_id"
                          " WHERE m.outcome <> 'ok' OR m.median_us IS NULL OR m.gpu_id <> b.gpu_id"
                          " OR m.kernel_id <> b.kernel_id OR m.shape <> b.shape OR m.dtype <> b.dtype"
                          " OR m.layout <> b.layout");
      while (s.step()) {
        report.problems.push_back(
            fmt::format("best row ({}, {}) names measurement {} ({}), which does not fit it", s.text(0),
                        s.text(1), s.int64(2), s.text(3)));
      }
    }
  } catch (const Error& e) {
    report.problems.push_back(fmt::format("SQLite could not read the database: {}", e.what()));
  }
  report.ok = report.problems.empty();
  return report;
}

}  // namespace ktune::cache
