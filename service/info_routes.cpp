/// `GET /v1/health`, `/v1/version`, `/v1/devices` and `/metrics`.

#include <string>

#include <nlohmann/json.hpp>
#include "service/http_message.hpp"

#include "cache/config_cache.hpp"
#include "harness/device_info.hpp"
#include "ktune/error.hpp"
#include "service/gpu_gauges.hpp"
#include "service/job_runner.hpp"
#include "service/metrics.hpp"
#include "service/process_metrics.hpp"
#include "service/reader_pool.hpp"
#include "service/routes.hpp"
#include "service/service_context.hpp"

namespace ktune::service {
namespace {

/// The API version of the routes under /v1 (docs/service.md).
constexpr int kApiVersion = 1;

nlohmann::json devices_json(const ServiceContext& ctx) {
  nlohmann::json devices = nlohmann::json::array();
  try {
    const int count = harness::device_count();
    for (int i = 0; i < count; ++i) {
      nlohmann::json d = harness::to_json(harness::query_device(i));
      bool used = false;
      if (ctx.jobs != nullptr) {
        for (const int ordinal : ctx.jobs->devices()) used = used || ordinal == i;
      }
      d["runs_jobs"] = used;
      devices.push_back(std::move(d));
    }
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kNoDevice) throw;
    return {{"devices", devices}, {"available", false}, {"reason", e.what()}};
  }
  return {{"devices", devices}, {"available", true}};
}

}  // namespace

void add_info_routes(Router& server, ServiceContext& ctx) {
  add_route(server, ctx, Method::kGet, "/v1/health", Access::kRead,
            [&ctx](const HttpRequest&, HttpResponse& res) {
              send_json(res, {{"status", "ok"},
                              {"read_only", ctx.read_only},
                              {"schema_version", ctx.readers->get().schema_version()}});
            });
  add_route(server, ctx, Method::kGet, "/v1/version", Access::kRead,
            [](const HttpRequest&, HttpResponse& res) {
              send_json(res, {{"ktune", KTUNE_VERSION_STRING},
                              {"api", kApiVersion},
                              {"schema_version", cache::kSchemaVersion}});
            });
  add_route(server, ctx, Method::kGet, "/v1/devices", Access::kRead,
            [&ctx](const HttpRequest&, HttpResponse& res) { send_json(res, devices_json(ctx)); });
  add_route(server, ctx, Method::kGet, "/metrics", Access::kRead,
            [&ctx](const HttpRequest&, HttpResponse& res) {
              std::string text = ctx.metrics->render();
              text += build_info_text(KTUNE_VERSION_STRING, kApiVersion, cache::kSchemaVersion);
              text += process_metrics_text();
              if (ctx.jobs != nullptr) {
                text += ctx.jobs->metrics_text();
                text += gpu_gauges_text(ctx.gpu_sensors, ctx.jobs->devices());
              }
              res.status = 200;
              res.set_content(text, "text/plain; version=0.0.4; charset=utf-8");
            });
}

}  // namespace ktune::service
