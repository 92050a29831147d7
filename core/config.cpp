#include "core/config.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/json_depth.hpp"
#include "ktune/error.hpp"

namespace ktune {
namespace {

template <class Json>
Config config_from_json(const Json& json) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::kBadInput, fmt::format("bad config JSON {}: {}", json.dump(), why));
  };
  if (!json.is_object()) throw bad("not an object");
  if (!json.contains("template") || !json["template"].is_string()) throw bad("\"template\" must be a string");
  if (!json.contains("params") || !json["params"].is_object()) throw bad("\"params\" must be an object");
  std::vector<Config::Param> params;
  for (const auto& [name, value] : json["params"].items()) {
    if (!value.is_number_integer()) throw bad(fmt::format("parameter '{}' is not an integer", name));
    params.emplace_back(name, value.template get<int64_t>());
  }
  return Config(json["template"].template get<std::string>(), std::move(params));
}

}  // namespace

std::optional<int64_t> Config::find(std::string_view name) const {
  for (const auto& [n, v] : params) {
    if (n == name) return v;
  }
  return std::nullopt;
}

int64_t Config::at(std::string_view name) const {
  if (auto v = find(name)) return *v;
  throw Error(ErrorKind::kBadInput, fmt::format("config {} has no parameter '{}'", key(), name));
}

void Config::set(std::string_view name, int64_t value) {
  for (auto& [n, v] : params) {
    if (n == name) {
      v = value;
      return;
    }
  }
  params.emplace_back(std::string(name), value);
}

void Config::erase(std::string_view name) {
  std::erase_if(params, [&](const Param& p) { return p.first == name; });
}

std::string Config::key() const {
  std::string out = variant + ":";
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0) out += ',';
    out += params[i].first;
    out += '=';
    out += std::to_string(params[i].second);
  }
  return out;
}

nlohmann::ordered_json Config::to_json() const {
  nlohmann::ordered_json p = nlohmann::ordered_json::object();
  for (const auto& [n, v] : params) p[n] = v;
  return {{"template", variant}, {"params", std::move(p)}};
}

std::string Config::to_json_text() const { return to_json().dump(); }

Config Config::from_json(const nlohmann::ordered_json& json) { return config_from_json(json); }

Config Config::from_json(const nlohmann::json& json) { return config_from_json(json); }

Config Config::from_json_text(std::string_view text) {
  if (!json_depth_ok(text)) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("config JSON nests deeper than {} levels of arrays and objects", kMaxJsonDepth));
  }
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw Error(ErrorKind::kBadInput, fmt::format("bad config JSON '{}': {}", text, e.what()));
  }
  return from_json(json);
}

}  // namespace ktune
