// Reading a user kernel's `fill` table (docs/byo.md): a range, a pattern or a sequence, its
// expressions over the dimensions only, and the checks a fill written with numbers allows at once.
#include "kernel_templates/user_kernel/user_kernel_fill_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/expression_evaluator.hpp"
#include "core/toml_read.hpp"

namespace ktune::kernel_templates {
namespace {

using toml_read::line_of;

/// A fill's expression: an expression over the dimensions only (inputs must not depend on the
/// config, or the reference and the candidates would read different inputs).
UserExpression fill_expression(DescriptionReaderContext& ctx, const toml::node& node,
                               const std::string& field) {
  UserExpression e = ctx.expression(node, field);
  ExpressionEvaluator dims_only(ctx.dimensions());
  try {
    dims_only.add(e.text);
  } catch (const ExpressionError& err) {
    ctx.fail(
        e.line, field,
        fmt::format("{}: a fill may use the dimensions only, so that the reference and every config read "
                    "the same inputs",
                    err.what()));
  }
  return e;
}

/// A fill written with numbers only is checked here (zeros only, a value the type cannot hold);
/// one with expressions is checked for each shape (UserKernelSpec::rejection).
void check_constant_fill(DescriptionReaderContext& ctx, const UserFill& f, const UserArg& a,
                         const std::string& field) {
  const auto constant = [](const std::optional<UserExpression>& e, double fallback) -> std::optional<double> {
    if (!e) return fallback;
    char* end = nullptr;
    const double v = std::strtod(e->text.c_str(), &end);
    if (e->text.empty() || end != e->text.c_str() + e->text.size()) return std::nullopt;
    return v;
  };
  BufferFill fill;
  switch (f.kind) {
    case BufferFill::Kind::kRandom:
    case BufferFill::Kind::kFile:  // a data reference's inputs (not written in TOML): checked where read
      return;
    case BufferFill::Kind::kRange: {
      const auto lo = constant(f.min, 0);
      const auto hi = constant(f.max, 0);
      if (!lo || !hi) return;
      fill = BufferFill::range(*lo, *hi);
      break;
    }
    case BufferFill::Kind::kPattern:
      fill = BufferFill::repeat(f.pattern);
      break;
    case BufferFill::Kind::kSequence: {
      const auto start = constant(f.start, 0);
      const auto step = constant(f.step, 1);
      const auto modulo = constant(f.modulo, 0);
      if (!start || !step || !modulo) return;
      for (double v : {*start, *step, *modulo}) {
        // 4e18 < 2^62: the bound BufferFill keeps sequences within, and a safe cast to int64.
        if (v != std::floor(v) || std::abs(v) > 4.0e18)
          ctx.fail(f.line, field + ".sequence", fmt::format("{} is not an integer within +-4e18", v));
      }
      std::optional<int64_t> m;
      if (f.modulo) m = static_cast<int64_t>(*modulo);
      fill = BufferFill::sequence(static_cast<int64_t>(*start), static_cast<int64_t>(*step), m);
      break;
    }
  }
  // Two elements at least (the smallest buffer with a pattern's or a sequence's second value);
  // a one-element buffer is checked with its shape.
  if (auto why = fill.invalid_reason(std::max<std::size_t>(2, f.pattern.size()), a.integer))
    ctx.fail(f.line, field, *why);
}

}  // namespace

/// `fill = { min = A, max = B }`, `{ pattern = [...] }` or `{ sequence = { start, step, modulo } }`.
UserFill read_user_fill(DescriptionReaderContext& ctx, const toml::node& node, const UserArg& a,
                        const std::string& field) {
  UserFill f;
  f.line = line_of(node);
  const toml::table* t = node.as_table();
  if (t == nullptr)
    ctx.fail(f.line, field,
             "must be a table: { min = A, max = B }, { pattern = [...] } or { sequence = {...} }");
  ctx.reject_unknown(*t, {"min", "max", "pattern", "sequence"}, field);
  const bool range = t->contains("min") || t->contains("max");
  const int kinds = int{range} + int{t->contains("pattern")} + int{t->contains("sequence")};
  if (kinds != 1)
    ctx.fail(f.line, field, "give exactly one of a range (min and max), a pattern or a sequence");
  if (range) {
    if (!t->contains("min") || !t->contains("max")) ctx.fail(f.line, field, "a range needs both min and max");
    f.kind = BufferFill::Kind::kRange;
    f.min = fill_expression(ctx, *t->get("min"), field + ".min");
    f.max = fill_expression(ctx, *t->get("max"), field + ".max");
  } else if (const toml::node* p = t->get("pattern")) {
    f.kind = BufferFill::Kind::kPattern;
    const toml::array* values = p->as_array();
    if (values == nullptr || values->empty() || values->size() > BufferFill::kMaxPatternValues)
      ctx.fail(line_of(*p), field + ".pattern",
               fmt::format("must be a list of 1 to {} numbers", BufferFill::kMaxPatternValues));
    for (const toml::node& v : *values) {
      const auto number = v.value<double>();
      if (!number || !(v.is_integer() || v.is_floating_point()))
        ctx.fail(line_of(*p), field + ".pattern", "must be a list of numbers");
      f.pattern.push_back(*number);
    }
  } else {
    const toml::node* q = t->get("sequence");
    const toml::table* seq = q->as_table();
    const std::string sfield = field + ".sequence";
    if (seq == nullptr) ctx.fail(line_of(*q), sfield, "must be a table { start = A, step = B, modulo = C }");
    ctx.reject_unknown(*seq, {"start", "step", "modulo"}, sfield);
    if (!a.integer) ctx.fail(line_of(*q), sfield, "a sequence fills an integer buffer (type i32, i64 or u8)");
    f.kind = BufferFill::Kind::kSequence;
    if (const toml::node* v = seq->get("start")) f.start = fill_expression(ctx, *v, sfield + ".start");
    if (const toml::node* v = seq->get("step")) f.step = fill_expression(ctx, *v, sfield + ".step");
    if (const toml::node* v = seq->get("modulo")) f.modulo = fill_expression(ctx, *v, sfield + ".modulo");
  }
  check_constant_fill(ctx, f, a, field);
  return f;
}

}  // namespace ktune::kernel_templates
