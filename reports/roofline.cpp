#include "reports/roofline.hpp"

#include <array>

#include <nlohmann/json.hpp>

namespace ktune::reports {
namespace {

std::optional<double> number(const nlohmann::json& object, const std::string& key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  if (!(value > 0)) return std::nullopt;
  return value;
}

}  // namespace

Ceilings ceilings_for(std::string_view ceilings_json, DType dtype) {
  Ceilings ceilings;
  const nlohmann::json object = nlohmann::json::parse(ceilings_json, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return ceilings;
  ceilings.tflops = number(object, std::string(to_string(dtype)) + "_tflops");
  const bool fp8 = dtype == DType::kFP8E4M3 || dtype == DType::kFP8E5M2;
  if (!ceilings.tflops && fp8) ceilings.tflops = number(object, "fp8_tflops");
  if (!ceilings.tflops && dtype == DType::kF32) ceilings.tflops = number(object, "fp32_tflops");
  ceilings.gbps = number(object, "copy_gbps");
  if (!ceilings.gbps) ceilings.gbps = number(object, "dram_gbps");
  return ceilings;
}

Roofline roofline(const Work& work, const Ceilings& ceilings, double median_us) {
  Roofline r;
  if (!(median_us > 0)) return r;
  const double seconds = median_us * 1e-6;
  if (work.flops) r.tflops = *work.flops / seconds / 1e12;
  if (work.bytes) r.gbps = *work.bytes / seconds / 1e9;
  double compute_s = 0;
  double memory_s = 0;
  if (work.flops && ceilings.tflops) compute_s = *work.flops / (*ceilings.tflops * 1e12);
  if (work.bytes && ceilings.gbps) memory_s = *work.bytes / (*ceilings.gbps * 1e9);
  if (compute_s == 0 && memory_s == 0) return r;
  r.bound = compute_s >= memory_s ? "compute" : "memory";
  r.pct_of_ceiling = 100.0 * std::max(compute_s, memory_s) / seconds;
  return r;
}

}  // namespace ktune::reports
