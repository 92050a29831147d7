#include "cache/detail/stored_work.hpp"

#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace ktune::cache::detail {
namespace {

std::optional<double> positive(std::optional<double> v) {
  return v && std::isfinite(*v) && *v > 0 ? v : std::nullopt;
}

/// The model's answer, or nothing when it throws: a kernel it cannot read leaves the row unknown
/// rather than failing the migration or the import.
Work ask(const WorkModel& work_model, const WorkKey& key) {
  try {
    return usable_work(work_model(key));
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

Work usable_work(Work work) { return Work{positive(work.flops), positive(work.bytes)}; }

void fill_missing_work(Database& db, const WorkModel& work_model) {
  if (!work_model) return;
  struct Key {
    std::string kernel, shape, dtype, layout;
  };
  std::vector<Key> keys;
  {
    StatementLease s = db.cached(
        "SELECT DISTINCT k.name, m.shape, m.dtype, m.layout FROM measurements m"
        " JOIN kernels k ON k.id = m.kernel_id WHERE m.work_flops IS NULL AND m.work_bytes IS NULL");
    while (s->step()) keys.push_back({s->text(0), s->text(1), s->text(2), s->text(3)});
  }
  StatementLease update = db.cached(
      "UPDATE measurements SET work_flops = ?1, work_bytes = ?2"
      " WHERE work_flops IS NULL AND work_bytes IS NULL AND kernel_id IN (SELECT id FROM kernels WHERE name "
      "= ?3)"
      " AND shape = ?4 AND dtype = ?5 AND layout = ?6");
  for (const Key& k : keys) {
    const std::optional<DType> dtype = find_dtype(k.dtype);
    if (!dtype) continue;  // a dtype this build does not know: its work stays unknown
    const Work w = ask(work_model, {k.kernel, k.shape, *dtype, k.layout});
    if (!w.flops && !w.bytes) continue;
    update->reset();
    update->bind(1, w.flops).bind(2, w.bytes).bind(3, k.kernel).bind(4, k.shape).bind(5, k.dtype);
    update->bind(6, k.layout);
    update->run();
  }
}

void fill_missing_work(Measurement& m, std::string_view kernel, const WorkModel& work_model) {
  if (m.work.flops || m.work.bytes || !work_model) return;
  m.work = ask(work_model, {kernel, m.shape, m.dtype, m.layout});
}

}  // namespace ktune::cache::detail
