#include "core/expression_evaluator.hpp"

#include <cmath>

#include <fmt/format.h>
#include <muParser.h>

namespace ktune {
namespace {

double fmod_op(double a, double b) { return std::fmod(a, b); }
double floor_fn(double x) { return std::floor(x); }
double ceil_fn(double x) { return std::ceil(x); }
double ceil_div_fn(double a, double b) { return std::ceil(a / b); }
double is_pow2_fn(double x) {
  if (x < 1 || x != std::floor(x)) return 0;
  const auto v = static_cast<unsigned long long>(x);
  return (v & (v - 1)) == 0 ? 1 : 0;
}

}  // namespace

ExpressionEvaluator::ExpressionEvaluator(std::vector<std::string> variables)
    : variables_(std::move(variables)), slots_(std::make_unique<double[]>(variables_.size())) {
  for (size_t i = 0; i < variables_.size(); ++i) slots_[i] = 1;
}

ExpressionEvaluator::~ExpressionEvaluator() = default;
ExpressionEvaluator::ExpressionEvaluator(ExpressionEvaluator&&) noexcept = default;
ExpressionEvaluator& ExpressionEvaluator::operator=(ExpressionEvaluator&&) noexcept = default;

size_t ExpressionEvaluator::slot_of(std::string_view name) const {
  for (size_t i = 0; i < variables_.size(); ++i) {
    if (variables_[i] == name) return i;
  }
  return variables_.size();
}

size_t ExpressionEvaluator::add(std::string_view text, size_t visible) {
  auto parser = std::make_unique<mu::Parser>();
  const std::string expr(text);
  try {
    parser->DefineOprt("%", fmod_op, mu::prMUL_DIV, mu::oaLEFT, true);
    parser->DefineFun("floor", floor_fn);
    parser->DefineFun("ceil", ceil_fn);
    parser->DefineFun("ceil_div", ceil_div_fn);
    parser->DefineFun("is_pow2", is_pow2_fn);
    parser->SetExpr(expr);
    // GetUsedVar parses with undefined names allowed, so every unknown name is found, not just the first.
    for (const auto& [name, unused] : parser->GetUsedVar()) {
      const size_t slot = slot_of(name);
      if (slot == variables_.size()) {
        throw ExpressionError(fmt::format("unknown parameter '{}' in '{}'", name, expr), name);
      }
      if (slot >= visible) {
        throw ExpressionError(fmt::format("'{}' is used in '{}' before it is defined", name, expr), name);
      }
    }
    for (size_t i = 0; i < visible; ++i) parser->DefineVar(variables_[i], &slots_[i]);
    parser->Eval();
  } catch (const mu::Parser::exception_type& e) {
    const std::string token = e.GetToken().empty() ? expr : e.GetToken();
    throw ExpressionError(fmt::format("bad expression '{}': {}", expr, e.GetMsg()), token);
  }
  parsers_.push_back(std::move(parser));
  return parsers_.size() - 1;
}

double ExpressionEvaluator::eval(size_t index) const { return parsers_[index]->Eval(); }

}  // namespace ktune
