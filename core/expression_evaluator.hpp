#pragma once
/// Compiled muParser expressions (config spaces, presets, user kernel descriptions) over a fixed set of named
/// variables (slots). Variables are doubles bound by address, so setting a slot and evaluating costs no
/// parsing. Besides muParser's own operators (+ - * / ^ < <= > >= == != && || ?:) and functions (min, max,
/// log2, abs, ...), expressions may use `%` (fmod), floor(x), ceil(x), ceil_div(a, b) and is_pow2(x).

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mu {
class Parser;
}

namespace ktune {

/// A bad expression: `what()` says why, `bad_part` is the offending token or text.
class ExpressionError : public std::runtime_error {
 public:
  ExpressionError(const std::string& message, std::string bad_part)
      : std::runtime_error(message), bad_part_(std::move(bad_part)) {}
  const std::string& bad_part() const { return bad_part_; }

 private:
  std::string bad_part_;
};

class ExpressionEvaluator {
 public:
  /// @param variables the names of the slots, in slot order
  explicit ExpressionEvaluator(std::vector<std::string> variables);
  ~ExpressionEvaluator();
  ExpressionEvaluator(ExpressionEvaluator&&) noexcept;
  ExpressionEvaluator& operator=(ExpressionEvaluator&&) noexcept;

  /// Compiles `text`, which may use only the first `visible` slots; returns its index. Throws
  /// ExpressionError for a syntax error, an unknown name, or a slot past `visible` (used before it
  /// is defined).
  size_t add(std::string_view text, size_t visible);
  /// add() with every slot visible.
  size_t add(std::string_view text) { return add(text, variables_.size()); }

  void set(size_t slot, double value) { slots_[slot] = value; }
  double get(size_t slot) const { return slots_[slot]; }
  const std::vector<std::string>& variables() const { return variables_; }
  /// Index of slot `name`, or variables().size() when there is none.
  size_t slot_of(std::string_view name) const;

  /// Value of expression `index` with the current slots.
  double eval(size_t index) const;

 private:
  std::vector<std::string> variables_;
  std::unique_ptr<double[]> slots_;
  std::vector<std::unique_ptr<mu::Parser>> parsers_;
};

}  // namespace ktune
