#pragma once
/// A config: one point of a kernel's config space. It names the kernel template it belongs to (a
/// kernel family may have several, e.g. the tiled GEMM and the GEMV) and its parameters in the
/// space's declaration order, which is also the order of the template arguments (D3).

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ktune::tuner {

class Config {
 public:
  using Param = std::pair<std::string, int64_t>;

  Config() = default;
  /// @param template_name the template of the kernel family this config instantiates, e.g. "tiled"
  /// @param params        parameter name -> value, in template-argument order
  Config(std::string template_name, std::vector<Param> params)
      : template_(std::move(template_name)), params_(std::move(params)) {}

  const std::string& template_name() const { return template_; }
  const std::vector<Param>& params() const { return params_; }

  /// Value of parameter `name`, or nullopt when the config has none of that name.
  std::optional<int64_t> find(std::string_view name) const;
  /// Value of parameter `name`; throws ktune::Error(kBadInput) naming it when absent.
  int64_t at(std::string_view name) const;

  /// A compact text that identifies the config inside one space, e.g.
  /// "tiled:BLOCK_M=128,BLOCK_N=64"; usable as a map key. Not the canonical name (see ConfigSpace).
  std::string key() const;

  /// {"template":"tiled","params":{"BLOCK_M":128,...}} with params in declaration order.
  nlohmann::ordered_json to_json() const;
  /// to_json() as compact text, the form stored in the cache's config_json.
  std::string to_json_text() const;
  /// Inverse of to_json(); throws ktune::Error(kBadInput) naming the bad part.
  static Config from_json(const nlohmann::ordered_json& json);
  /// Inverse of to_json_text(); throws ktune::Error(kBadInput) naming the bad part.
  static Config from_json_text(std::string_view text);

  bool operator==(const Config&) const = default;
  std::strong_ordering operator<=>(const Config&) const = default;

 private:
  std::string template_;
  std::vector<Param> params_;
};

}  // namespace ktune::tuner
