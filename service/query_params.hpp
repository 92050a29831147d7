#pragma once
/// Reading a request's query parameters and JSON body with errors that name the bad part
/// ("parameter 'page': ..."), for every route.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ktune/dtype.hpp"
#include "service/http_message.hpp"

namespace ktune::service {

/// Longest value a parameter may have (a shape text is well under it).
inline constexpr size_t kMaxParamBytes = 1024;

/// The parameter `name`; 400 when absent or empty.
std::string required_param(const HttpRequest& req, const char* name);
/// The parameter `name`, or nullopt when absent.
std::optional<std::string> optional_param(const HttpRequest& req, const char* name);
/// true/false/1/0; `fallback` when absent; 400 otherwise.
bool bool_param(const HttpRequest& req, const char* name, bool fallback);
/// A whole number in [min, max]; `fallback` when absent; 400 otherwise.
int64_t int_param(const HttpRequest& req, const char* name, int64_t fallback, int64_t min, int64_t max);

/// A filter's dtype (core/dtype.hpp dtype_filter_from_string): nullopt when absent or empty; 400
/// naming the parameter, the value and the known dtypes otherwise.
std::optional<DType> dtype_filter_param(const HttpRequest& req, const char* name);

/// 400 naming the first query parameter of the request that is not one of `known` (the route's).
void require_known_params(const HttpRequest& req, const std::vector<std::string>& known);

/// The body as a JSON object; 400 naming the problem when it is not one.
nlohmann::json json_body(const HttpRequest& req);
/// `doc[name]` as a string; 400 when it is present but not a string. nullopt when absent or null.
std::optional<std::string> string_field(const nlohmann::json& doc, const char* name);

}  // namespace ktune::service
