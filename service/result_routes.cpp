/// `GET /v1/results` (measurements, paged, in the export format's fields) and `POST /v1/results`
/// (import a `ktune cache export` document; posting the same export again adds nothing).

#include <atomic>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include "service/http_message.hpp"

#include "cache/config_cache.hpp"
#include "cache/measurement_json.hpp"
#include "core/outcome.hpp"
#include "ktune/error.hpp"
#include "service/query_params.hpp"
#include "service/reader_pool.hpp"
#include "service/routes.hpp"
#include "service/service_context.hpp"

namespace ktune::service {
namespace {

constexpr int64_t kDefaultPageSize = 500;
constexpr int64_t kMaxPageSize = 5000;

/// One measurement with the export format's fields (docs/export-format.md), the ids replaced by
/// what they name.
nlohmann::json measurement_json(const cache::StoredMeasurement& s) {
  nlohmann::json row = cache::measurement_fields(s.m);
  row["id"] = s.id;
  row["run_id"] = s.run_id;
  row["run_started_at"] = s.run_started_at;
  row["gpu"] = s.gpu.name;
  row["kernel"] = s.kernel.name;
  row["source_hash"] = s.kernel.source_hash;
  row["measured_at"] = s.measured_at;
  return row;
}

/// An ISO-8601 time or date ("2026-05-01", "2026-05-01T12:00:00Z"): digits and -:T.Z only.
std::string since_param(const HttpRequest& req) {
  const auto since = optional_param(req, "since");
  if (!since) return "";
  if (since->size() < 4 || since->find_first_not_of("0123456789-:T.Z") != std::string::npos)
    bad_request("parameter 'since' must be an ISO-8601 UTC time such as 2026-05-01T12:00:00Z");
  return *since;
}

void get_results(const ServiceContext& ctx, const HttpRequest& req, HttpResponse& res) {
  cache::Filter filter;
  filter.kernel = optional_param(req, "kernel").value_or("");
  filter.gpu_name = optional_param(req, "gpu").value_or("");
  filter.dtype = dtype_filter_param(req, "dtype");
  const std::string since = since_param(req);
  const int64_t page = int_param(req, "page", 1, 1, 1'000'000'000);
  const int64_t page_size = int_param(req, "page_size", kDefaultPageSize, 1, kMaxPageSize);
  const int64_t skip = (page - 1) * page_size;
  int64_t matched = 0;
  nlohmann::json rows = nlohmann::json::array();
  ctx.readers->get().for_each_measurement(filter, [&](const cache::StoredMeasurement& s) {
    if (!since.empty() && s.measured_at < since) return;
    if (matched >= skip && matched < skip + page_size) rows.push_back(measurement_json(s));
    ++matched;
  });
  const bool more = matched > skip + page_size;
  send_json(res, {{"page", page},
                  {"page_size", page_size},
                  {"total", matched},
                  {"next_page", more ? nlohmann::json(page + 1) : nlohmann::json()},
                  {"measurements", std::move(rows)}});
}

void post_results(const ServiceContext& ctx, const HttpRequest& req, HttpResponse& res) {
  static std::atomic<uint64_t> upload_counter{0};
  // The file name is the server's own; nothing from the request reaches a path.
  const auto path = ctx.scratch_dir / fmt::format("upload-{}.json", upload_counter.fetch_add(1));
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(req.body.data(), static_cast<std::streamsize>(req.body.size()));
    if (!out) throw ApiError(503, "unavailable", "the server cannot store the uploaded body (disk full?)");
  }
  struct RemoveOnExit {
    std::filesystem::path p;
    ~RemoveOnExit() {
      std::error_code ec;
      std::filesystem::remove(p, ec);
    }
  } remove_upload{path};
  cache::MergeStats stats;
  try {
    stats = ctx.writer->import_json(path);
  } catch (const Error& e) {
    std::string message = e.what();
    for (auto at = message.find(path.string()); at != std::string::npos; at = message.find(path.string()))
      message.replace(at, path.string().size(), "the body");
    if (e.kind() == ErrorKind::kBadInput) bad_request(message);
    throw Error(e.kind(), message);
  }
  send_json(res, {{"measurements_added", stats.measurements_added},
                  {"measurements_skipped", stats.measurements_skipped},
                  {"best_updated", stats.best_updated}});
}

}  // namespace

void add_result_routes(Router& server, ServiceContext& ctx) {
  add_route(server, ctx, Method::kGet, "/v1/results", Access::kRead,
            [&ctx](const HttpRequest& req, HttpResponse& res) { get_results(ctx, req, res); },
            {"kernel", "gpu", "dtype", "since", "page", "page_size"});
  add_route(server, ctx, Method::kPost, "/v1/results", Access::kWrite,
            [&ctx](const HttpRequest& req, HttpResponse& res) { post_results(ctx, req, res); });
}

}  // namespace ktune::service
