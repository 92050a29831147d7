#include "tuner/loop/detail/template_evaluator.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/toml_read.hpp"
#include "ktune/error.hpp"

namespace ktune::tuner::detail {
namespace {

using toml_read::fail_at;

std::vector<std::string> slot_names(const TemplateSpace& tmpl, const std::vector<std::string>& dims) {
  std::vector<std::string> names = dims;
  for (auto v : kContextVariables) names.emplace_back(v);
  for (const auto& p : tmpl.params) names.push_back(p.name);
  for (const auto& d : tmpl.derived) names.push_back(d.name);
  return names;
}

}  // namespace

TemplateEvaluator::TemplateEvaluator(const TemplateSpace& tmpl, const std::vector<std::string>& dims,
                                     const std::string& file)
    : dims_(dims), ev_(slot_names(tmpl, dims)) {
  param_base_ = dims.size() + std::size(kContextVariables);
  derived_base_ = param_base_ + tmpl.params.size();
  for (size_t i = 0; i < tmpl.derived.size(); ++i) {
    const auto& d = tmpl.derived[i];
    try {
      derived_expr_.push_back(ev_.add(d.text, derived_base_ + i));
    } catch (const ExpressionError& e) {
      fail_at(file, d.line,
              fmt::format("derived value '{}' of template '{}': {}", d.name, tmpl.name, e.what()));
    }
  }
  for (const auto& c : tmpl.constraints) {
    try {
      constraint_expr_.push_back(ev_.add(c.text));
    } catch (const ExpressionError& e) {
      fail_at(file, c.line, fmt::format("constraint '{}' of template '{}': {}", c.name, tmpl.name, e.what()));
    }
  }
}

void TemplateEvaluator::bind(const ProblemContext& context) {
  std::string missing;
  for (size_t i = 0; i < dims_.size(); ++i) {
    bool found = false;
    for (const auto& [name, value] : context.dims) {
      if (name == dims_[i]) {
        ev_.set(i, static_cast<double>(value));
        found = true;
      }
    }
    if (!found) missing += (missing.empty() ? "" : ", ") + dims_[i];
  }
  if (!missing.empty() || context.dims.size() != dims_.size()) {
    std::string given;
    for (const auto& [name, value] : context.dims)
      given += fmt::format("{}{}={}", given.empty() ? "" : ",", name, value);
    std::string want;
    for (const auto& d : dims_) want += (want.empty() ? "" : ",") + d;
    throw Error(ErrorKind::kBadInput,
                fmt::format("shape '{}' does not have exactly the dimensions {} of this space", given, want));
  }
  const size_t c = dims_.size();
  const auto& l = context.limits;
  const int64_t values[] = {context.elem_bytes,   l.max_smem_per_block,  l.max_threads_per_block,
                            l.max_regs_per_block, l.max_regs_per_thread, l.sm_count,
                            l.warp_size};
  static_assert(std::size(values) == std::size(kContextVariables));
  for (size_t i = 0; i < std::size(values); ++i) ev_.set(c + i, static_cast<double>(values[i]));
}

void TemplateEvaluator::eval_derived() {
  for (size_t i = 0; i < derived_expr_.size(); ++i) ev_.set(derived_base_ + i, ev_.eval(derived_expr_[i]));
}

int TemplateEvaluator::first_failure() const {
  for (size_t i = 0; i < constraint_expr_.size(); ++i) {
    const double v = ev_.eval(constraint_expr_[i]);
    if (v == 0 || std::isnan(v)) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace ktune::tuner::detail
