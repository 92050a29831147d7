#include "service/query_params.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include "service/http_message.hpp"

#include "core/dtype.hpp"
#include "core/json_depth.hpp"
#include "ktune/error.hpp"
#include "service/api_error.hpp"

namespace ktune::service {

namespace {

/// Calls `visit(name, value)` (both decoded) for each pair of the request's query string, in order,
/// until it returns true. A pair is split at its first '=', so `shape=m=16,n=4096,k=4096` needs no
/// escaping.
template <typename Visit>
void visit_query(const HttpRequest& req, Visit visit) {
  for (const auto& [name, value] : req.query) {
    if (visit(name, value)) return;
  }
}

/// The first value of `name` in the request's query string.
std::optional<std::string> find_query_value(const HttpRequest& req, std::string_view name) {
  std::optional<std::string> found;
  visit_query(req, [&](const std::string& key, std::string value) {
    if (key != name) return false;
    found = std::move(value);
    return true;
  });
  return found;
}

}  // namespace

std::optional<DType> dtype_filter_param(const HttpRequest& req, const char* name) {
  const std::string text = optional_param(req, name).value_or("");
  try {
    return dtype_filter_from_string(text);
  } catch (const Error& e) {
    bad_request(fmt::format("parameter '{}': {}", name, e.what()));
  }
}

void require_known_params(const HttpRequest& req, const std::vector<std::string>& known) {
  visit_query(req, [&](const std::string& name, const std::string&) {
    if (!name.empty() && std::find(known.begin(), known.end(), name) == known.end()) {
      bad_request(known.empty()
                      ? fmt::format("unknown parameter '{}' (this route takes none)", name.substr(0, 64))
                      : fmt::format("unknown parameter '{}' (this route takes: {})", name.substr(0, 64),
                                    fmt::join(known, ", ")));
    }
    return false;
  });
}

std::optional<std::string> optional_param(const HttpRequest& req, const char* name) {
  auto found = find_query_value(req, name);
  if (!found) return std::nullopt;
  std::string value = std::move(*found);
  if (value.size() > kMaxParamBytes)
    bad_request(fmt::format("parameter '{}' is longer than {} bytes", name, kMaxParamBytes));
  return value;
}

std::string required_param(const HttpRequest& req, const char* name) {
  auto value = optional_param(req, name);
  if (!value || value->empty()) bad_request(fmt::format("parameter '{}' is missing", name));
  return *value;
}

bool bool_param(const HttpRequest& req, const char* name, bool fallback) {
  const auto value = optional_param(req, name);
  if (!value) return fallback;
  if (*value == "true" || *value == "1") return true;
  if (*value == "false" || *value == "0") return false;
  bad_request(fmt::format("parameter '{}' must be true or false", name));
}

int64_t int_param(const HttpRequest& req, const char* name, int64_t fallback, int64_t min, int64_t max) {
  const auto value = optional_param(req, name);
  if (!value) return fallback;
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
  if (ec != std::errc() || end != value->data() + value->size() || n < min || n > max)
    bad_request(fmt::format("parameter '{}' must be a whole number from {} to {}", name, min, max));
  return n;
}

nlohmann::json json_body(const HttpRequest& req) {
  if (!json_depth_ok(req.body))
    bad_request(
        fmt::format("the body nests JSON deeper than {} levels of arrays and objects", kMaxJsonDepth));
  nlohmann::json doc = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) bad_request("the body is not valid JSON");
  if (!doc.is_object()) bad_request("the body must be a JSON object");
  return doc;
}

std::optional<std::string> string_field(const nlohmann::json& doc, const char* name) {
  const auto it = doc.find(name);
  if (it == doc.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) bad_request(fmt::format("field '{}' must be a string", name));
  return it->get<std::string>();
}

}  // namespace ktune::service
