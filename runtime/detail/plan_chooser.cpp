#include "runtime/detail/plan_chooser.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/shape.hpp"
#include "harness/cublaslt_algorithm.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "runtime/detail/library_plan.hpp"

namespace ktune::runtime::detail {
namespace {

namespace kt = kernel_templates;

/// The stored config as a Config of one of the kernel's templates that serves `p`; nullopt when
/// it names an unknown template, does not parse, or is rejected for this problem.
std::optional<ktune::Config> usable(const std::string& kernel, const cache::BestConfig& best,
                                    const kt::Problem& p, const PlanKey& key) {
  try {
    ktune::Config c = ktune::Config::from_json_text(best.config_json);  // declaration order, as stored
    // A library algorithm: whether it runs here (its library version) is decided when the plan is built.
    if (harness::is_cublaslt_config(c))
      return library_config_serves(key, c) ? std::optional(c) : std::nullopt;
    const auto specs = kt::specs_of(kernel);
    const auto it = std::find_if(specs.begin(), specs.end(),
                                 [&](const kt::KernelSpec* s) { return s->variant() == c.variant; });
    if (it == specs.end() || (*it)->rejection(p, c)) return std::nullopt;
    return c;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

std::pair<ktune::Config, PlanInfo> choose_plan(const cache::BestIndex& index, MissPolicy policy,
                                               const harness::DeviceInfo& device, const PlanKey& key) {
  const std::string& gpu_name = device.name;
  const OpBinding& b = binding_of(key.op);
  const kt::Problem p = make_problem(key);
  const std::string shape = p.shape_text();
  const char* dtype = to_string(key.dtype);
  std::optional<cache::BestConfig> best;
  if (const cache::BestConfig* exact = index.find(b.kernel, shape, key.dtype, p.layout)) {
    best = *exact;
  } else if (policy == MissPolicy::kNearest) {
    best = index.find_or_nearest(b.kernel, ktune::Shape::parse(shape), key.dtype, p.layout);
  } else if (policy == MissPolicy::kError) {
    throw Error(ErrorKind::kNotFound,
                fmt::format("no tuned {} config for {} {}{}{} on {}: run `ktune tune --kernel {} --shape {} "
                            "--dtype {}{}{}`",
                            b.kernel, shape, dtype, p.layout.empty() ? "" : " ", p.layout, gpu_name, b.kernel,
                            shape, dtype, p.layout.empty() ? "" : " --layout ", p.layout));
  }
  PlanInfo info;
  if (best) {
    if (auto c = usable(b.kernel, *best, p, key)) {
      info.source = best->fallback ? PlanInfo::Source::kNearest : PlanInfo::Source::kTuned;
      info.config_name = best->config_name;
      info.tuned_shape = best->tuned_shape;
      info.tuned_median_us = best->stats.median_us;
      return {std::move(*c), info};
    }
  }
  return default_plan(key, device.arch());
}

std::pair<ktune::Config, PlanInfo> default_plan(const PlanKey& key, std::string_view arch) {
  const kt::Problem p = make_problem(key);
  const kt::KernelSpec& spec = default_spec(key, arch);
  ktune::Config c = spec.default_config(p);
  PlanInfo info;
  info.source = PlanInfo::Source::kDefault;
  info.config_name = spec.canonical_name(p, c);
  return {std::move(c), info};
}

}  // namespace ktune::runtime::detail
