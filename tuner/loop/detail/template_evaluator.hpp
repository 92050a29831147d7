#pragma once
/// The compiled expressions of one template, laid out as slots: the problem dims, the context
/// variables (elem_bytes, device limits), the parameters, then the derived values.

#include <string>
#include <vector>

#include "core/expression_evaluator.hpp"
#include "tuner/space/config_space.hpp"

namespace ktune::tuner::detail {

class TemplateEvaluator {
 public:
  /// Compiles every derived value and constraint of `tmpl`. Throws ktune::Error(kBadInput)
  /// "FILE:LINE: ..." naming the expression and its bad part.
  TemplateEvaluator(const TemplateSpace& tmpl, const std::vector<std::string>& dims, const std::string& file);

  /// Binds the dims and context variables; throws ktune::Error(kBadInput) when the context's
  /// dimensions are not exactly `dims` (in any order).
  void bind(const ProblemContext& context);
  void set_param(size_t index, int64_t value) { ev_.set(param_base_ + index, static_cast<double>(value)); }
  /// Evaluates the derived values in order.
  void eval_derived();
  /// Index of the first constraint that fails (result 0 or NaN), or -1 when all pass.
  int first_failure() const;
  double derived(size_t index) const { return ev_.get(derived_base_ + index); }

 private:
  std::vector<std::string> dims_;
  ExpressionEvaluator ev_;
  size_t param_base_ = 0;
  size_t derived_base_ = 0;
  std::vector<size_t> derived_expr_;
  std::vector<size_t> constraint_expr_;
};

}  // namespace ktune::tuner::detail
