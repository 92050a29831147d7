#include "service/job_request.hpp"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "ktune/error.hpp"
#include "service/api_error.hpp"
#include "service/query_params.hpp"
#include "tuner/inputs/shape_set.hpp"

namespace ktune::service {
namespace {

/// The file of a name in the server's configs/<subdir> (tuner::named_config_file): never a path and
/// never a file of that name in the server's working directory.
std::string config_file_of(const std::string& value, const char* field, std::string_view subdir) {
  try {
    return tuner::named_config_file(value, subdir).string();
  } catch (const Error& e) {
    bad_request(fmt::format("field '{}': {}", field, e.what()));
  }
}

std::vector<std::string> string_list(const nlohmann::json& body, const char* field) {
  const auto it = body.find(field);
  if (it == body.end() || it->is_null()) return {};
  std::vector<std::string> out;
  if (it->is_string()) {
    out.push_back(it->get<std::string>());
  } else if (it->is_array()) {
    if (it->size() > 4096) bad_request(fmt::format("field '{}' holds more than 4096 entries", field));
    for (const auto& v : *it) {
      if (!v.is_string()) bad_request(fmt::format("field '{}' must hold strings only", field));
      out.push_back(v.get<std::string>());
    }
  } else {
    bad_request(fmt::format("field '{}' must be a string or an array of strings", field));
  }
  for (const auto& v : out) {
    if (v.empty() || v.size() > kMaxParamBytes)
      bad_request(fmt::format("field '{}' holds an empty or over-long entry", field));
  }
  return out;
}

template <typename T>
std::optional<T> integer_field(const nlohmann::json& body, const char* field, T min, T max) {
  const auto it = body.find(field);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() && !it->is_number_unsigned())
    bad_request(fmt::format("field '{}' must be a whole number", field));
  if (it->is_number_unsigned()) {
    const auto v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(max)) bad_request(fmt::format("field '{}' must be at most {}", field, max));
    return static_cast<T>(v);
  }
  const auto v = it->get<int64_t>();
  if (v < static_cast<int64_t>(min) || (max >= 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(max)))
    bad_request(fmt::format("field '{}' must be from {} to {}", field, min, max));
  return static_cast<T>(v);
}

}  // namespace

std::string JobRequest::lane() const {
  return compile_only ? "compile:" + arch : fmt::format("device:{}", device);
}

JobRequest parse_job_request(const nlohmann::json& body, const std::vector<int>& devices) {
  static const std::vector<std::string> kKnown = {"kernel", "kernels",      "preset", "shapes",   "shape_set",
                                                  "dtype",  "dtypes",       "layout", "strategy", "budget",
                                                  "seed",   "compile_only", "arch",   "device"};
  for (const auto& [key, value] : body.items()) {
    if (std::find(kKnown.begin(), kKnown.end(), key) == kKnown.end())
      bad_request(fmt::format("unknown field '{}'", key));
  }
  JobRequest r;
  auto& s = r.session;
  s.kernels = string_list(body, "kernel");
  for (auto& k : string_list(body, "kernels")) s.kernels.push_back(std::move(k));
  if (auto preset = string_field(body, "preset")) {
    s.preset = config_file_of(*preset, "preset", "presets");
  }
  if (s.kernels.empty() == s.preset.empty()) bad_request("give either 'kernel' or 'preset' (one of them)");
  s.shapes = string_list(body, "shapes");
  if (auto set = string_field(body, "shape_set")) {
    if (!s.shapes.empty()) bad_request("give 'shapes' or 'shape_set', not both");
    s.shapes_file = config_file_of(*set, "shape_set", "shapes");
  }
  s.dtypes = string_list(body, "dtype");
  for (auto& d : string_list(body, "dtypes")) s.dtypes.push_back(std::move(d));
  s.layout = string_field(body, "layout");
  if (auto strategy = string_field(body, "strategy")) {
    try {
      s.strategy = tuner::parse_strategy(*strategy);
    } catch (const std::exception&) {
      bad_request("field 'strategy' must be " + tuner::strategy_names());
    }
  }
  s.budget = integer_field<size_t>(body, "budget", 0, 1'000'000);
  s.search_seed = integer_field<uint64_t>(body, "seed", 0, UINT64_MAX);
  if (const auto it = body.find("compile_only"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) bad_request("field 'compile_only' must be true or false");
    r.compile_only = it->get<bool>();
  }
  if (r.compile_only) {
    r.arch = string_field(body, "arch").value_or("");
    static const std::regex kArch("sm_[0-9]{2,3}[a-z]?");
    if (!std::regex_match(r.arch, kArch)) bad_request("field 'arch' must name the target, e.g. \"sm_90\"");
    if (body.contains("device")) bad_request("field 'device' goes with measuring jobs, not compile_only");
  } else {
    if (body.contains("arch")) bad_request("field 'arch' goes with compile_only");
    if (devices.empty()) {
      throw ApiError(503, "unavailable",
                     "this server has no GPU to measure on; submit \"compile_only\": true with an \"arch\"");
    }
    r.device = integer_field<int>(body, "device", 0, 1024).value_or(devices.front());
    if (std::find(devices.begin(), devices.end(), r.device) == devices.end())
      bad_request(
          fmt::format("field 'device': this server measures on device(s) {}", fmt::join(devices, ",")));
  }
  return r;
}

}  // namespace ktune::service
