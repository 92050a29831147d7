#include "fixture_db.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "cache/config_cache.hpp"

namespace ktune::reports::testing {

std::map<int64_t, int64_t> write_fixture_db(const Fixture& f, const std::filesystem::path& db_path) {
  cache::ConfigCache db = cache::ConfigCache::open(db_path);
  std::map<int64_t, int64_t> run_ids;
  for (const auto& [id, run] : f.runs) run_ids[id] = db.begin_run(run);
  std::map<int64_t, int64_t> ids;
  size_t i = 0;
  while (i < f.measurements.size()) {
    const cache::StoredMeasurement& first = f.measurements[i];
    std::vector<int64_t> fixture_ids;
    std::vector<cache::Measurement> group;
    for (; i < f.measurements.size(); ++i) {
      const cache::StoredMeasurement& m = f.measurements[i];
      if (m.run_id != first.run_id || m.gpu.name != first.gpu.name || m.kernel.name != first.kernel.name)
        break;
      fixture_ids.push_back(m.id);
      group.push_back(m.m);
    }
    const std::vector<int64_t> stored =
        db.record(run_ids.at(first.run_id), db.upsert_gpu(first.gpu), db.upsert_kernel(first.kernel), group);
    for (size_t j = 0; j < stored.size(); ++j) ids[fixture_ids[j]] = stored[j];
  }
  for (const int64_t id : f.best_ids) db.set_best(ids.at(id));
  return ids;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "ktune-reports-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace ktune::reports::testing
