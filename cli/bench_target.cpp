#include "cli/bench_target.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::cli {
namespace {

namespace kt = kernel_templates;

std::string variants_of(std::string_view kernel) {
  std::string out;
  for (const kt::KernelSpec* s : kt::specs_of(kernel))
    out += (out.empty() ? "" : ", ") + std::string(s->variant());
  return out;
}

}  // namespace

BenchTarget parse_bench_target(std::string_view kernel, std::string_view shape, std::string_view dtype,
                               std::string_view layout) {
  BenchTarget t;
  t.kernel = kt::find_kernel(kernel);  // throws, listing the known kernels
  const bool copy = t.kernel->name == "copy";
  if (!copy && kt::specs_of(t.kernel->name).empty()) {
    std::string with;
    for (const kt::KernelDescriptor& k : kt::kernel_catalog()) {
      if (k.name == "copy" || !kt::specs_of(k.name).empty()) with += (with.empty() ? "" : ", ") + k.name;
    }
    throw Error(ErrorKind::kBadInput,
                fmt::format("kernel {} has no templates to bench yet (kernels with templates: {})",
                            t.kernel->name, with));
  }
  // copy also takes the fp8 dtypes the harness knows
  t.problem.dtype = copy ? ktune::dtype_from_string(dtype) : t.kernel->parse_dtype(dtype);
  t.problem.layout = layout.empty() ? t.kernel->default_layout : std::string(layout);
  t.kernel->require_layout(t.problem.layout);
  const ktune::Shape parsed = ktune::Shape::parse(shape).normalized(t.kernel->dims);
  t.shape = parsed.canonical();
  t.problem.dims = parsed.dims();
  return t;
}

BenchConfig check_bench_config(const BenchTarget& target, const ktune::Config& config) {
  const auto specs = kt::specs_of(target.kernel->name);
  const auto it =
      std::find_if(specs.begin(), specs.end(), [&](auto* s) { return s->variant() == config.variant; });
  if (it == specs.end()) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("config: kernel {} has no template '{}' (templates: {})", target.kernel->name,
                            config.variant, variants_of(target.kernel->name)));
  }
  const kt::KernelSpec& spec = **it;
  const auto names = spec.param_names();
  for (const auto& [param, value] : config.params) {
    if (std::find(names.begin(), names.end(), param) == names.end()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      throw Error(ErrorKind::kBadInput,
                  fmt::format("config: template {} has no parameter '{}' (parameters: {})", spec.variant(),
                              param, known));
    }
  }
  if (auto why = spec.rejection(target.problem, config)) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("config {} cannot serve {} {} {}: {}", nlohmann::json(config.to_json()).dump(),
                            target.kernel->name, target.shape, ktune::to_string(target.problem.dtype), *why));
  }
  return {&spec, config, spec.canonical_name(target.problem, config)};
}

BenchConfig parse_bench_config(const BenchTarget& target, std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::kBadInput, fmt::format("--config is not JSON ({}): {}", text, e.what()));
  }
  if (!j.is_object())
    throw Error(ErrorKind::kBadInput, fmt::format("--config is not a JSON object: {}", text));
  const auto specs = kt::specs_of(target.kernel->name);
  std::string variant;
  if (const auto t = j.find("template"); t != j.end()) {
    if (!t->is_string())
      throw Error(ErrorKind::kBadInput, fmt::format("--config: 'template' is not a string: {}", text));
    variant = t->get<std::string>();
  } else if (specs.size() == 1) {
    variant = std::string(specs.front()->variant());
  } else {
    throw Error(ErrorKind::kBadInput, fmt::format("--config needs \"template\" for kernel {} (one of: {})",
                                                  target.kernel->name, variants_of(target.kernel->name)));
  }
  nlohmann::json params = nlohmann::json::object();
  if (const auto p = j.find("params"); p != j.end()) {
    if (!p->is_object())
      throw Error(ErrorKind::kBadInput, fmt::format("--config: 'params' is not an object: {}", text));
    params = *p;
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "template" && key != "params") params[key] = value;
  }
  // The template's default for the problem fills what the config leaves out.
  const auto it = std::find_if(specs.begin(), specs.end(), [&](auto* s) { return s->variant() == variant; });
  ktune::Config config;
  config.variant = variant;
  if (it != specs.end()) config = (*it)->default_config(target.problem);
  for (const auto& [key, value] : params.items()) {
    if (!value.is_number_integer()) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("--config: parameter '{}' is not an integer: {}", key, value.dump()));
    }
    config.set(key, value.get<int64_t>());
  }
  return check_bench_config(target, config);
}

BenchConfig default_bench_config(const BenchTarget& target) {
  std::string why;
  for (const kt::KernelSpec* spec : kt::specs_of(target.kernel->name)) {
    const ktune::Config c = spec->default_config(target.problem);
    const auto rejected = spec->rejection(target.problem, c);
    if (!rejected) return {spec, c, spec->canonical_name(target.problem, c)};
    why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", spec->variant(), *rejected);
  }
  throw Error(ErrorKind::kBadInput,
              fmt::format("no template of kernel {} serves {} {} by default ({})", target.kernel->name,
                          target.shape, ktune::to_string(target.problem.dtype), why));
}

void require_bench_arch(const BenchConfig& config, std::string_view arch, std::string_view device) {
  if (auto why = config.spec->arch_rejection(arch))
    throw Error(ErrorKind::kBadInput,
                fmt::format("{} cannot run on {} ({}): {}", config.name, device, arch, *why));
}

}  // namespace ktune::cli
