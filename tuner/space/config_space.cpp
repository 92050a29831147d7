#include "tuner/space/config_space.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ktune/error.hpp"
#include "tuner/loop/detail/template_evaluator.hpp"
#include "tuner/space/canonical_name.hpp"

namespace ktune::tuner {

uint64_t TemplateSpace::size() const {
  uint64_t n = 1;
  for (const auto& p : params) n *= p.values.size();
  return n;
}

std::string Enumeration::summary() const {
  std::string out = fmt::format("kept {} of {}", configs.size(), total);
  std::string parts;
  for (const auto& p : pruned_by) {
    if (p.count == 0) continue;
    parts += fmt::format("{}{}.{} {}", parts.empty() ? "" : ", ", p.template_name, p.constraint, p.count);
  }
  if (!parts.empty()) out += "; pruned by " + parts;
  if (!seeds.empty() || seed_rejected > 0)
    out += fmt::format("; seeds {}, seed_rejected {}", seeds.size(), seed_rejected);
  return out;
}

const TemplateSpace& ConfigSpace::template_space(std::string_view name) const {
  for (const auto& t : templates_) {
    if (t.name == name) return t;
  }
  throw Error(ErrorKind::kBadInput, fmt::format("space {} has no template '{}'", source_, name));
}

uint64_t ConfigSpace::size() const {
  uint64_t n = 0;
  for (const auto& t : templates_) n += t.size();
  return n;
}

namespace {

/// The spec's view of `context`: a space with templates needs the dtype.
kernel_templates::Problem problem_of(const ProblemContext& context, const std::string& source) {
  if (!context.dtype) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("{}: enumerating a space of kernel templates needs the problem's dtype", source));
  }
  return {context.dims, *context.dtype, context.layout};
}

bool serves_dtype(const kernel_templates::KernelSpec& spec, DType dtype) {
  const auto served = spec.dtypes();
  return std::find(served.begin(), served.end(), dtype) != served.end();
}

bool has_specs(const std::vector<TemplateSpace>& templates) {
  return std::any_of(templates.begin(), templates.end(), [](const auto& t) { return t.spec != nullptr; });
}

}  // namespace

Enumeration ConfigSpace::enumerate(const ProblemContext& context) const {
  Enumeration out;
  const kernel_templates::Problem problem =
      has_specs(templates_) ? problem_of(context, source_) : kernel_templates::Problem{};
  for (const auto& tmpl : templates_) {
    if (tmpl.spec != nullptr && !serves_dtype(*tmpl.spec, problem.dtype)) {
      out.pruned_by.push_back({tmpl.name, "dtype", "dtype served by the template", tmpl.line, tmpl.size()});
      out.total += tmpl.size();
      out.pruned += tmpl.size();
      out.seed_rejected += tmpl.seeds.size();
      continue;
    }
    if (!serves_layout(tmpl, context.layout)) {
      std::string list;
      for (const auto& l : tmpl.layouts) list += (list.empty() ? "" : ", ") + l;
      out.pruned_by.push_back(
          {tmpl.name, "layout", fmt::format("layout in [{}]", list), tmpl.line, tmpl.size()});
      out.total += tmpl.size();
      out.pruned += tmpl.size();
      out.seed_rejected += tmpl.seeds.size();
      continue;
    }
    detail::TemplateEvaluator ev(tmpl, dims_, source_);
    ev.bind(context);
    const size_t first_count = out.pruned_by.size();
    for (const auto& c : tmpl.constraints) out.pruned_by.push_back({tmpl.name, c.name, c.text, c.line, 0});
    const size_t spec_count = out.pruned_by.size();
    if (tmpl.spec != nullptr)
      out.pruned_by.push_back({tmpl.name, "spec", "KernelSpec::tuning_rejection", tmpl.line, 0});

    const size_t np = tmpl.params.size();
    std::vector<size_t> idx(np, 0);
    for (size_t p = 0; p < np; ++p) ev.set_param(p, tmpl.params[p].values[0]);
    const uint64_t n = tmpl.size();
    out.total += n;
    for (uint64_t point = 0; point < n; ++point) {
      ev.eval_derived();
      const int failed = ev.first_failure();
      if (failed >= 0) {
        ++out.pruned_by[first_count + static_cast<size_t>(failed)].count;
        ++out.pruned;
      } else {
        std::vector<Config::Param> params;
        params.reserve(np);
        for (size_t p = 0; p < np; ++p)
          params.emplace_back(tmpl.params[p].name, tmpl.params[p].values[idx[p]]);
        Config config(tmpl.name, std::move(params));
        if (const auto why =
                tmpl.spec != nullptr ? tmpl.spec->tuning_rejection(problem, config) : std::nullopt) {
          if (out.first_spec_rejection.empty()) out.first_spec_rejection = *why;
          ++out.pruned_by[spec_count].count;
          ++out.pruned;
        } else {
          out.configs.push_back(std::move(config));
        }
      }
      // Odometer step: the last parameter varies fastest.
      for (size_t p = np; p-- > 0;) {
        if (++idx[p] < tmpl.params[p].values.size()) {
          ev.set_param(p, tmpl.params[p].values[idx[p]]);
          break;
        }
        idx[p] = 0;
        ev.set_param(p, tmpl.params[p].values[0]);
      }
    }
    for (const auto& seed : tmpl.seeds) {
      for (size_t p = 0; p < np; ++p) ev.set_param(p, seed.params[p].second);
      ev.eval_derived();
      if (ev.first_failure() < 0 && (tmpl.spec == nullptr || !tmpl.spec->tuning_rejection(problem, seed))) {
        out.seeds.push_back(seed);
      } else {
        ++out.seed_rejected;
      }
    }
  }
  if (out.configs.empty()) {
    std::string shape;
    for (const auto& [name, value] : context.dims)
      shape += fmt::format("{}{}={}", shape.empty() ? "" : ",", name, value);
    throw Error(ErrorKind::kBadInput,
                fmt::format("{}: the space of kernel '{}' is empty for shape {} (elem_bytes={}): {}{}",
                            source_, kernel_, shape, context.elem_bytes, out.summary(),
                            out.first_spec_rejection.empty()
                                ? ""
                                : "; the spec's first rejection: " + out.first_spec_rejection),
                "", source_);
  }
  return out;
}

namespace {

/// Index of `config`'s template in `templates`, after checking it is a point of it; throws otherwise.
size_t locate(const std::vector<TemplateSpace>& templates, const Config& config, const std::string& source) {
  for (size_t t = 0; t < templates.size(); ++t) {
    const auto& tmpl = templates[t];
    if (tmpl.name != config.variant) continue;
    bool ok = tmpl.params.size() == config.params.size();
    for (size_t p = 0; ok && p < tmpl.params.size(); ++p) {
      const auto& [name, value] = config.params[p];
      const auto& values = tmpl.params[p].values;
      ok = name == tmpl.params[p].name && std::find(values.begin(), values.end(), value) != values.end();
    }
    if (ok) return t;
    break;
  }
  throw Error(ErrorKind::kBadInput,
              fmt::format("config {} is not a point of space {}", config.key(), source));
}

}  // namespace

bool ConfigSpace::serves_layout(const TemplateSpace& tmpl, std::string_view layout) {
  return tmpl.layouts.empty() || layout.empty() ||
         std::find(tmpl.layouts.begin(), tmpl.layouts.end(), layout) != tmpl.layouts.end();
}

bool ConfigSpace::contains(const Config& config) const {
  try {
    locate(templates_, config, source_);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::optional<std::string> ConfigSpace::first_failing_constraint(const Config& config,
                                                                 const ProblemContext& context) const {
  const auto& tmpl = templates_[locate(templates_, config, source_)];
  if (tmpl.spec != nullptr && !serves_dtype(*tmpl.spec, problem_of(context, source_).dtype))
    return tmpl.name + ".dtype";
  if (!serves_layout(tmpl, context.layout)) return tmpl.name + ".layout";
  detail::TemplateEvaluator ev(tmpl, dims_, source_);
  ev.bind(context);
  for (size_t p = 0; p < tmpl.params.size(); ++p) ev.set_param(p, config.params[p].second);
  ev.eval_derived();
  const int failed = ev.first_failure();
  if (failed >= 0) return tmpl.name + "." + tmpl.constraints[static_cast<size_t>(failed)].name;
  if (tmpl.spec != nullptr && tmpl.spec->tuning_rejection(problem_of(context, source_), config))
    return tmpl.name + ".spec";
  return std::nullopt;
}

std::vector<std::pair<std::string, double>> ConfigSpace::derived_values(const Config& config,
                                                                        const ProblemContext& context) const {
  const auto& tmpl = templates_[locate(templates_, config, source_)];
  detail::TemplateEvaluator ev(tmpl, dims_, source_);
  ev.bind(context);
  for (size_t p = 0; p < tmpl.params.size(); ++p) ev.set_param(p, config.params[p].second);
  ev.eval_derived();
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < tmpl.derived.size(); ++i) out.emplace_back(tmpl.derived[i].name, ev.derived(i));
  return out;
}

std::string ConfigSpace::canonical_name(const Config& config, DType dtype, std::string_view layout) const {
  const TemplateSpace& tmpl = template_space(config.variant);
  if (tmpl.spec == nullptr) return tuner::canonical_name(kernel_, dtype, layout, tmpl.pattern, config);
  return tmpl.spec->canonical_name({{}, dtype, std::string(layout)}, config);
}

}  // namespace ktune::tuner
