#pragma once
/// A config: one point of a kernel's config space, the one form every layer uses (the config space
/// enumerates it, a KernelSpec compiles and launches it, the cache stores its JSON text, dispatch
/// reads it back). It names the template within the kernel family (`variant`, e.g. "tiled", "gemv")
/// and its integer parameters in the space's declaration order, which is also the order of the
/// template arguments (D3) and of the stored JSON.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ktune {

struct Config {
  using Param = std::pair<std::string, int64_t>;

  std::string variant;        ///< the template of the kernel family, e.g. "tiled"
  std::vector<Param> params;  ///< parameter name -> value, in declaration order

  Config() = default;
  Config(std::string variant_name, std::vector<Param> parameters)
      : variant(std::move(variant_name)), params(std::move(parameters)) {}

  /// Value of parameter `name`, or nullopt when the config has none of that name.
  std::optional<int64_t> find(std::string_view name) const;
  /// Value of parameter `name`; throws ktune::Error(kBadInput) naming it when absent.
  int64_t at(std::string_view name) const;
  /// Sets parameter `name` (appended when absent).
  void set(std::string_view name, int64_t value);
  /// Removes parameter `name` if present.
  void erase(std::string_view name);

  /// A compact text that identifies the config inside one space, e.g.
  /// "tiled:BLOCK_M=128,BLOCK_N=64"; usable as a map key. Not the canonical name (see ConfigSpace).
  std::string key() const;

  /// {"template":"tiled","params":{"BLOCK_M":128,...}} with params in declaration order.
  nlohmann::ordered_json to_json() const;
  /// to_json() as compact text, the form stored in the cache's config_json.
  std::string to_json_text() const;
  /// Inverse of to_json(); throws ktune::Error(kBadInput) naming the bad part.
  static Config from_json(const nlohmann::ordered_json& json);
  /// The same from a key-sorted JSON value (params in name order).
  static Config from_json(const nlohmann::json& json);
  /// Inverse of to_json_text(); throws ktune::Error(kBadInput) naming the bad part.
  static Config from_json_text(std::string_view text);

  bool operator==(const Config&) const = default;
  std::strong_ordering operator<=>(const Config&) const = default;
};

}  // namespace ktune
