#pragma once
/// What every route of the service shares: the database handles, the options that decide what a
/// request may do, the metrics and the job runner; and `add_route`, which registers a handler with
/// the error guard, the metrics label and (for routes that change anything) the token check.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "service/api_error.hpp"
#include "service/gpu_gauges.hpp"

#include "service/http_router.hpp"

namespace ktune::cache {
class ConfigCache;
}

namespace ktune::service {

class Metrics;
class ReaderPool;
class JobRunner;

struct ServiceContext {
  std::filesystem::path db_path;
  bool read_only = false;
  std::optional<std::string> token;  ///< none: routes that change anything are refused
  ReaderPool* readers = nullptr;
  cache::ConfigCache* writer = nullptr;  ///< null when read-only
  Metrics* metrics = nullptr;
  JobRunner* jobs = nullptr;          ///< null when read-only
  std::filesystem::path scratch_dir;  ///< the server's own folder for uploaded bodies
  std::string chart_js;               ///< Chart.js for HTML reports ("" = the reporters' default)
  GpuSensorSource gpu_sensors;        ///< the job GPUs' clock and temperature for /metrics (may be empty)
};

enum class Method { kGet, kPost, kDelete };
enum class Access { kRead, kWrite };

/// Registers `handler` for `method` on `pattern` (a regex; the pattern is also the metrics label).
/// kWrite routes answer 405 on a --read-only server and 401 without the right bearer token; a query
/// parameter not in `params` (the ones the route reads) is a 400 naming it and the known ones.
/// 405 on a --read-only server, 401 without the right bearer token (ApiError): what a kWrite route
/// checks first; the daemon also asks it before reading such a route's body.
void require_write_access(const ServiceContext& ctx, const HttpRequest& req);

void add_route(Router& server, ServiceContext& ctx, Method method, const std::string& pattern, Access access,
               RouteHandler handler, std::vector<std::string> params = {});

}  // namespace ktune::service
