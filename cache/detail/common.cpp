#include <chrono>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cache/detail/impl.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {

void ConfigCache::Impl::require_writable(std::string_view what) const {
  if (mode == Mode::kReadOnly) {
    throw Error(ErrorKind::kRuntime,
                fmt::format("{}: database {} was opened read-only", what, path.string()));
  }
}

namespace detail {

std::string now_iso() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  const std::time_t t = system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

void require_json_object(std::string_view text, std::string_view what) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    throw Error(ErrorKind::kBadInput, fmt::format("{} must be a JSON object, got '{}'", what, text));
  }
}

}  // namespace detail
}  // namespace ktune::cache
