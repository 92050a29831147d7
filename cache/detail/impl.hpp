#pragma once
/// ConfigCache's private state and the helpers its .cpp files share.

#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>

#include "cache/config_cache.hpp"
#include "cache/detail/sqlite_db.hpp"

namespace ktune::cache {

struct ConfigCache::Impl {
  Impl(const std::filesystem::path& p, Mode m, detail::Database::Open open) : path(p), mode(m), db(p, open) {}

  std::filesystem::path path;
  Mode mode;
  int version = 0;
  /// Every public call holds this lock: one connection, used by one thread at a time.
  mutable std::mutex mu;
  mutable detail::Database db;

  /// Throws ktune::Error(kRuntime) when this handle was opened read-only.
  void require_writable(std::string_view what) const;
};

namespace detail {

/// Current time as ISO-8601 UTC with milliseconds, e.g. 2025-01-31T12:00:00.123Z.
std::string now_iso();

/// Throws ktune::Error(kBadInput) unless `text` is a JSON object; `what` names the field.
void require_json_object(std::string_view text, std::string_view what);

/// Columns shared by every query that yields a BestConfig, in the order read_best() expects.
inline constexpr const char* kBestColumns =
    "g.name, k.name, k.source_hash, b.shape, b.dtype, m.config_name, m.config_json, m.median_us, m.min_us, "
    "m.mean_us, m.p90_us, m.stdev_us, m.samples, m.id";
inline constexpr const char* kBestJoins =
    " FROM best b JOIN gpus g ON g.id = b.gpu_id JOIN kernels k ON k.id = b.kernel_id"
    " JOIN measurements m ON m.id = b.measurement_id ";

/// A BestConfig from a row laid out as kBestColumns (fallback false, tuned_shape = shape).
BestConfig read_best(const Statement& s);

}  // namespace detail
}  // namespace ktune::cache
