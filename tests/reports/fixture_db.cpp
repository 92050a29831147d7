#include "fixture_db.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <tuple>

#include "cache/config_cache.hpp"

namespace ktune::reports::testing {

std::map<int64_t, int64_t> write_fixture_db(const Fixture& f, const std::filesystem::path& db_path) {
  cache::ConfigCache db = cache::ConfigCache::open(db_path);
  std::map<int64_t, int64_t> run_ids;
  for (const auto& [id, run] : f.runs) run_ids[id] = db.begin_run(run);
  // One record() (one transaction) per (run, GPU, kernel): a 100,000-row fixture takes seconds.
  std::map<std::tuple<int64_t, std::string, std::string>, std::vector<const cache::StoredMeasurement*>>
      groups;
  for (const cache::StoredMeasurement& m : f.measurements)
    groups[{m.run_id, m.gpu.name, m.kernel.name}].push_back(&m);
  std::map<int64_t, int64_t> ids;
  for (const auto& [key, members] : groups) {
    const cache::StoredMeasurement& first = *members.front();
    std::vector<cache::Measurement> group;
    for (const cache::StoredMeasurement* m : members) group.push_back(m->m);
    const std::vector<int64_t> stored =
        db.record(run_ids.at(first.run_id), db.upsert_gpu(first.gpu), db.upsert_kernel(first.kernel), group);
    for (size_t j = 0; j < stored.size(); ++j) ids[members[j]->id] = stored[j];
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
