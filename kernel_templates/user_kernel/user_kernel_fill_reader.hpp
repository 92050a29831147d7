#pragma once
/// Reading the `fill` of a user kernel's input argument (docs/byo.md) for the description reader
/// (user_kernel_reader.cpp), which supplies its failure reporting and expression checks.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "kernel_templates/user_kernel/user_kernel_description.hpp"

namespace ktune::kernel_templates {

/// What reading a fill needs from the reader of the whole description.
class FillReaderContext {
 public:
  virtual ~FillReaderContext() = default;
  /// Throws ktune::Error(kBadInput) naming the file, `line` and `field`.
  [[noreturn]] virtual void fail(uint32_t line, std::string_view field, const std::string& message) = 0;
  /// An expression field (a string or a number), checked against every symbol of the description.
  virtual UserExpression expression(const toml::node& node, const std::string& field) = 0;
  /// The description's dimensions, the only symbols a fill may use.
  virtual const std::vector<std::string>& dimensions() const = 0;
  /// Fails on a key of `t` not in `allowed`.
  virtual void reject_unknown(const toml::table& t, std::initializer_list<std::string_view> allowed,
                              std::string_view what) = 0;
};

/// `fill = { min = A, max = B }`, `{ pattern = [...] }` or `{ sequence = { start, step, modulo } }`
/// of argument `a`; a fill written with numbers only is checked here (zeros only, a value the type
/// cannot hold), one with expressions for each shape (UserKernelSpec::rejection).
UserFill read_user_fill(FillReaderContext& ctx, const toml::node& node, const UserArg& a,
                        const std::string& field);

}  // namespace ktune::kernel_templates
