#include "cache/measurement_json.hpp"

#include <optional>
#include <string>

namespace ktune::cache {
namespace {

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

nlohmann::json object_or_text(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? nlohmann::json(std::string(text)) : j;
}

nlohmann::json measurement_fields(const Measurement& m) {
  nlohmann::json stats = nullptr;
  if (m.stats) {
    stats = {{"median_us", m.stats->median_us}, {"min_us", m.stats->min_us},
             {"mean_us", m.stats->mean_us},     {"p90_us", m.stats->p90_us},
             {"stdev_us", m.stats->stdev_us},   {"samples", m.stats->samples}};
  }
  return {{"shape", m.shape},
          {"dtype", to_string(m.dtype)},
          {"layout", m.layout},
          {"config_name", m.config_name},
          {"config", object_or_text(m.config_json)},
          {"outcome", to_string(m.outcome)},
          {"reason", m.reason},
          {"stats", stats},
          {"fidelity", m.fidelity},
          {"verified", m.verified},
          {"work_flops", optional_number(m.work.flops)},
          {"work_bytes", optional_number(m.work.bytes)},
          {"counters", object_or_text(m.counters_json)},
          {"resources", object_or_text(m.resources_json)},
          {"baseline", m.baseline},
          {"sm_clock_mhz", optional_number(m.sm_clock_mhz)},
          {"temperature_c", optional_number(m.temperature_c)}};
}

}  // namespace ktune::cache
