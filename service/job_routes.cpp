/// `POST /v1/jobs`, `GET /v1/jobs`, `GET|DELETE /v1/jobs/{id}` and `GET /v1/jobs/{id}/events` (the
/// job's progress as Server-Sent Events: `event: state|progress|key`, `data: <JSON>`).

#include <charconv>
#include <chrono>
#include <string>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "service/job_runner.hpp"
#include "service/query_params.hpp"
#include "service/routes.hpp"
#include "service/service_context.hpp"

namespace ktune::service {
namespace {

/// A comment line sent when nothing happened for this long keeps proxies from closing the stream.
constexpr auto kHeartbeat = std::chrono::seconds(15);

JobRunner& runner(const ServiceContext& ctx) {
  if (ctx.jobs == nullptr)
    throw ApiError(405, "read_only", "this server runs with --read-only: it runs no jobs");
  return *ctx.jobs;
}

int64_t job_id(const httplib::Request& req) {
  const std::string& text = req.matches[1].str();
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0)
    throw ApiError(404, "not_found", "no such job (ids are whole numbers from 1)");
  return id;
}

std::string sse(const std::string& name, const std::string& data, uint64_t seq) {
  return fmt::format("id: {}\nevent: {}\ndata: {}\n\n", seq, name, data);
}

void stream_events(JobRunner& jobs, int64_t id, httplib::Response& res) {
  const nlohmann::json first = jobs.view(id);  // 404 for an unknown job, before the stream starts
  const std::string state = first.at("state").get<std::string>();
  const bool ended = state == "done" || state == "failed" || state == "cancelled";
  auto next = std::make_shared<uint64_t>(0);
  auto opening = std::make_shared<std::string>(
      sse("state", first.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 0));
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream", [&jobs, id, next, opening, ended](size_t, httplib::DataSink& sink) {
        if (!opening->empty()) {
          const std::string text = std::move(*opening);
          opening->clear();
          if (!sink.write(text.data(), text.size())) return false;
          if (ended) {
            sink.done();
            return true;
          }
        }
        bool closed = false;
        const auto events = jobs.events().wait(
            id, *next, std::chrono::duration_cast<std::chrono::milliseconds>(kHeartbeat), closed);
        std::string text;
        for (const auto& e : events) text += sse(e.name, e.data, e.seq + 1);
        if (text.empty() && !closed) text = ": keep-alive\n\n";
        if (!text.empty() && !sink.write(text.data(), text.size())) return false;
        if (closed) sink.done();
        return true;
      });
}

}  // namespace

void add_job_routes(httplib::Server& server, ServiceContext& ctx) {
  add_route(server, ctx, Method::kPost, "/v1/jobs", Access::kWrite,
            [&ctx](const httplib::Request& req, httplib::Response& res) {
              send_json(res, runner(ctx).submit(json_body(req)), 201);
            });
  add_route(server, ctx, Method::kGet, "/v1/jobs", Access::kRead,
            [&ctx](const httplib::Request& req, httplib::Response& res) {
              const auto limit = int_param(req, "limit", 100, 1, 1000);
              send_json(res, {{"jobs", runner(ctx).list(static_cast<size_t>(limit))}});
            },
            {"limit"});
  add_route(server, ctx, Method::kGet, R"(/v1/jobs/(\d{1,64}))", Access::kRead,
            [&ctx](const httplib::Request& req, httplib::Response& res) {
              send_json(res, runner(ctx).view(job_id(req)));
            });
  add_route(server, ctx, Method::kDelete, R"(/v1/jobs/(\d{1,64}))", Access::kWrite,
            [&ctx](const httplib::Request& req, httplib::Response& res) {
              send_json(res, runner(ctx).cancel(job_id(req)));
            });
  add_route(server, ctx, Method::kGet, R"(/v1/jobs/(\d{1,64})/events)", Access::kRead,
            [&ctx](const httplib::Request& req, httplib::Response& res) {
              stream_events(runner(ctx), job_id(req), res);
            });
}

}  // namespace ktune::service
