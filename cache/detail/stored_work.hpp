#pragma once
/// The work stored with measurements (measurements.work_flops, .work_bytes): filling it where a row
/// has none, from the WorkModel the opener of the database passed (ConfigCache::open).

#include "cache/config_cache.hpp"
#include "cache/detail/sqlite_db.hpp"

namespace ktune::cache::detail {

/// `work` with every field that is not finite and > 0 dropped (a model's 0 means "not modelled").
Work usable_work(Work work);

/// Asks `work_model` once per distinct key (kernel name, shape, dtype, layout) among the
/// measurements that have neither work_flops nor work_bytes, and stores what it answers. A key the
/// model does not know, or throws on, stays NULL. Runs in the caller's transaction; an empty model
/// does nothing.
void fill_missing_work(Database& db, const WorkModel& work_model);

/// The model's answer for one measurement that arrives without work (an import of an older
/// export); `m.work` unchanged when it has any field or there is no model.
void fill_missing_work(Measurement& m, std::string_view kernel, const WorkModel& work_model);

}  // namespace ktune::cache::detail
