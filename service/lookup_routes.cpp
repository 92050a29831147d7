/// `GET /v1/best` and `POST /v1/best:batch`: the best tuned config for a key, answered with the
/// document `ktune query --json` prints (docs/service.md "Lookups").

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include "service/http_message.hpp"

#include "cache/config_cache.hpp"
#include "core/shape.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "ktune/error.hpp"
#include "service/metrics.hpp"
#include "service/query_params.hpp"
#include "service/reader_pool.hpp"
#include "service/routes.hpp"
#include "service/service_context.hpp"

namespace ktune::service {
namespace {

/// Most keys one batch may ask (a runtime warming up a model asks a few hundred).
constexpr size_t kMaxBatchKeys = 4096;

struct KeyRequest {
  std::optional<std::string> gpu;
  std::string kernel;
  std::string shape;
  std::string dtype;
  std::optional<std::string> layout;
  bool fallback = true;
};

/// Rethrows a catalog or shape error as a 400 that names the request part.
template <typename Fn>
auto checked(const char* part, Fn fn) {
  try {
    return fn();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kBadInput) throw;
    bad_request(fmt::format("{}: {}", part, e.what()));
  }
}

std::string default_gpu(const cache::ConfigCache& db) {
  const auto gpus = db.gpu_names();
  if (gpus.size() == 1) return gpus.front();
  if (gpus.empty()) throw ApiError(404, "not_found", "the database holds no GPU yet: nothing is tuned");
  std::string names;
  for (const auto& g : gpus) names += (names.empty() ? "" : ", ") + g;
  bad_request(fmt::format("parameter 'gpu' is missing and the database holds several GPUs ({})", names));
}

/// The answer document, or an ApiError (404 when nothing is tuned for the key).
nlohmann::json answer(const ServiceContext& ctx, const KeyRequest& k) {
  const auto started = std::chrono::steady_clock::now();
  const cache::ConfigCache& db = ctx.readers->get();
  kernel_templates::KernelDescriptor stored_only;
  const auto* desc = checked("kernel", [&] {
    return kernel_templates::lookup_kernel(
        k.kernel, k.shape, k.dtype,
        [&](std::string_view name) { return db.current_source_hash(name).has_value(); }, stored_only);
  });
  const DType dtype = checked("dtype", [&] { return desc->parse_dtype(k.dtype); });
  const std::string layout = k.layout.value_or(desc->default_layout);
  checked("layout", [&] {
    desc->require_layout(layout);
    return 0;
  });
  const std::string shape =
      checked("shape", [&] { return Shape::parse(k.shape).normalized(desc->dims).canonical(); });
  cache::Lookup lookup;
  lookup.gpu_name = k.gpu && !k.gpu->empty() ? *k.gpu : default_gpu(db);
  lookup.kernel = desc->name;
  lookup.shape = shape;
  lookup.dtype = dtype;
  lookup.layout = layout;
  const auto best = db.best(lookup, k.fallback);
  ctx.metrics->observe_lookup(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (!best) {
    throw ApiError(404, "not_found",
                   fmt::format("no tuned config for kernel {}, shape {}, dtype {}, layout '{}' on GPU '{}'{}",
                               desc->name, shape, to_string(dtype), layout, lookup.gpu_name,
                               k.fallback ? "" : " (fallback=false: nearest tuned shapes not considered)"));
  }
  return nlohmann::json::parse(best->to_json());
}

KeyRequest key_from_params(const HttpRequest& req) {
  KeyRequest k;
  k.gpu = optional_param(req, "gpu");
  k.kernel = required_param(req, "kernel");
  k.shape = required_param(req, "shape");
  k.dtype = required_param(req, "dtype");
  k.layout = optional_param(req, "layout");
  k.fallback = bool_param(req, "fallback", true);
  return k;
}

KeyRequest key_from_json(const nlohmann::json& j, size_t index) {
  const auto field = [&](const char* name, bool required) -> std::optional<std::string> {
    const auto it = j.find(name);
    if (it == j.end() || it->is_null()) {
      if (required) bad_request(fmt::format("keys[{}].{} is missing", index, name));
      return std::nullopt;
    }
    if (!it->is_string()) bad_request(fmt::format("keys[{}].{} must be a string", index, name));
    if (it->get_ref<const std::string&>().size() > kMaxParamBytes)
      bad_request(fmt::format("keys[{}].{} is longer than {} bytes", index, name, kMaxParamBytes));
    return it->get<std::string>();
  };
  if (!j.is_object()) bad_request(fmt::format("keys[{}] must be an object", index));
  static const char* const kFields[] = {"gpu", "kernel", "shape", "dtype", "layout", "fallback"};
  for (const auto& [name, value] : j.items()) {
    if (std::find(std::begin(kFields), std::end(kFields), name) == std::end(kFields))
      bad_request(fmt::format("keys[{}] has unknown field '{}' (known: {})", index, name.substr(0, 64),
                              fmt::join(kFields, ", ")));
  }
  KeyRequest k;
  k.gpu = field("gpu", false);
  k.kernel = *field("kernel", true);
  k.shape = *field("shape", true);
  k.dtype = *field("dtype", true);
  k.layout = field("layout", false);
  if (const auto it = j.find("fallback"); it != j.end()) {
    if (!it->is_boolean()) bad_request(fmt::format("keys[{}].fallback must be true or false", index));
    k.fallback = it->get<bool>();
  }
  return k;
}

}  // namespace

void add_lookup_routes(Router& server, ServiceContext& ctx) {
  add_route(server, ctx, Method::kGet, "/v1/best", Access::kRead,
            [&ctx](const HttpRequest& req, HttpResponse& res) {
              send_json(res, answer(ctx, key_from_params(req)));
            },
            {"gpu", "kernel", "shape", "dtype", "layout", "fallback"});
  add_route(server, ctx, Method::kPost, "/v1/best:batch", Access::kRead,
            [&ctx](const HttpRequest& req, HttpResponse& res) {
              const nlohmann::json body = json_body(req);
              for (const auto& [name, value] : body.items()) {
                if (name != "keys")
                  bad_request(fmt::format("unknown field '{}' (the body holds 'keys')", name));
              }
              const auto keys = body.find("keys");
              if (keys == body.end() || !keys->is_array())
                bad_request("field 'keys' must be an array of keys");
              if (keys->size() > kMaxBatchKeys)
                bad_request(fmt::format("field 'keys' holds {} keys; at most {} a request", keys->size(),
                                        kMaxBatchKeys));
              nlohmann::json results = nlohmann::json::array();
              for (size_t i = 0; i < keys->size(); ++i) {
                const KeyRequest k = key_from_json((*keys)[i], i);
                try {
                  results.push_back(answer(ctx, k));
                } catch (const ApiError& e) {
                  // One key's answer; a malformed key fails the whole request (above), an
                  // untuned or invalid one answers in its place.
                  results.push_back({{"error", {{"kind", e.kind()}, {"message", e.what()}}}});
                }
              }
              send_json(res, {{"results", std::move(results)}});
            });
}

}  // namespace ktune::service
