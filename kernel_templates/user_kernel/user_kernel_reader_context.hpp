#pragma once
/// What the readers of a description's parts (a fill, the reference, the prebuilt cubins, an index's
/// prunes) need from the reader of the whole description (user_kernel_reader.cpp): its failure
/// reporting, its expression checks, its dimensions, its reader and check of a config and its reader
/// of a launch.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "kernel_templates/user_kernel/user_kernel_description.hpp"

namespace ktune::kernel_templates {

class DescriptionReaderContext {
 public:
  virtual ~DescriptionReaderContext() = default;
  /// Throws ktune::Error(kBadInput) naming the file, `line` and `field`.
  [[noreturn]] virtual void fail(uint32_t line, std::string_view field, const std::string& message) = 0;
  /// An expression field (a string or a number), checked against every symbol of the description.
  virtual UserExpression expression(const toml::node& node, const std::string& field) = 0;
  /// The description's dimensions, the only symbols a fill may use.
  virtual const std::vector<std::string>& dimensions() const = 0;
  /// Fails on a key of `t` not in `allowed`.
  virtual void reject_unknown(const toml::table& t, std::initializer_list<std::string_view> allowed,
                              std::string_view what) = 0;
  /// A config `{ PARAM = value, ... }` of the tuned template: every parameter, nothing else.
  virtual Config read_config(const toml::node& node, const std::string& field) = 0;
  /// A launch table (`[[launch]]`, or the reference kernel's when `reference`): its function (the
  /// tuned template's when left out, a reference's required), grid, block, shared memory and args,
  /// the function checked against NAME.cu.
  virtual UserLaunch read_launch(const toml::table& t, const std::string& field, bool reference) = 0;
  /// Fails when a value of `config` is not among its parameter's values: at `line`, or at the
  /// parameter's line in NAME.toml when `line` is 0.
  virtual void check_point(const Config& config, const std::string& field, uint32_t line) = 0;
};

}  // namespace ktune::kernel_templates
