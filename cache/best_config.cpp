#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "cache/detail/impl.hpp"

namespace ktune::cache {

std::string BestConfig::to_json() const {
  nlohmann::json config = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) config = config_json;  // stored text that is not JSON travels as a string
  const nlohmann::json j = {
      {"gpu", gpu_name},
      {"kernel", kernel.name},
      {"source_hash", kernel.source_hash},
      {"shape", shape},
      {"tuned_shape", tuned_shape},
      {"dtype", to_string(dtype)},
      {"layout", layout},
      {"config_name", config_name},
      {"config", config},
      {"median_us", stats.median_us},
      {"min_us", stats.min_us},
      {"mean_us", stats.mean_us},
      {"p90_us", stats.p90_us},
      {"stdev_us", stats.stdev_us},
      {"samples", stats.samples},
      {"measurement_id", measurement_id},
      {"fallback", fallback},
      {"verified", verified},
  };
  return j.dump();
}

namespace detail {

BestConfig read_best(const Statement& s) {
  BestConfig b;
  b.gpu_name = s.text(0);
  b.kernel.name = s.text(1);
  b.kernel.source_hash = s.text(2);
  b.shape = s.text(3);
  b.tuned_shape = b.shape;
  b.dtype = s.dtype(4);
  b.config_name = s.text(5);
  b.config_json = s.text(6);
  b.stats.median_us = s.real(7);
  b.stats.min_us = s.real(8);
  b.stats.mean_us = s.real(9);
  b.stats.p90_us = s.real(10);
  b.stats.stdev_us = s.real(11);
  b.stats.samples = s.int64(12);
  b.measurement_id = s.int64(13);
  b.layout = s.text(14);
  b.verified = s.int64(15) != 0;
  return b;
}

}  // namespace detail
}  // namespace ktune::cache
