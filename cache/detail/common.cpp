#include <chrono>
#include <cmath>
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

void require_fidelity(double fidelity, std::string_view config_name) {
  if (!std::isfinite(fidelity) || fidelity <= 0) {
    throw Error(ErrorKind::kBadInput, fmt::format("measurement {}: fidelity must be finite and > 0, got {}",
                                                  config_name, fidelity));
  }
}

void require_work(const Work& work, std::string_view config_name) {
  for (const auto& [name, value] : {std::pair{"flops", work.flops}, std::pair{"bytes", work.bytes}}) {
    if (value && !(std::isfinite(*value) && *value > 0)) {
      throw Error(ErrorKind::kBadInput, fmt::format("measurement {}: work {} must be finite and > 0, got {}",
                                                    config_name, name, *value));
    }
  }
}

void read_measurement(const Statement& s, Measurement& m) {
  m.shape = s.text(4);
  m.dtype = s.dtype(5);
  m.layout = s.text(6);
  m.config_name = s.text(7);
  m.config_json = s.text(8);
  m.outcome = outcome_from_string(s.text_view(9));
  m.reason = s.text(10);
  if (s.is_null(11)) {
    m.stats.reset();
  } else {
    m.stats = Stats{s.real(11), s.real(12), s.real(13), s.real(14), s.real(15), s.int64(16)};
  }
  m.counters_json = s.text(17);
  m.resources_json = s.text(18);
  m.baseline = s.text(19);
  m.sm_clock_mhz = s.opt_real(20);
  m.temperature_c = s.opt_real(21);
  m.fidelity = s.real(23);
  m.verified = s.int64(24) != 0;
  m.work = Work{s.opt_real(25), s.opt_real(26)};
}

}  // namespace detail
}  // namespace ktune::cache
