/// `POST /v1/jobs`, `GET /v1/jobs`, `GET|DELETE /v1/jobs/{id}` and `GET /v1/jobs/{id}/events` (the
/// job's progress as Server-Sent Events: `event: state|progress|key`, `data: <JSON>`).

#include <charconv>
#include <chrono>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include "service/http_message.hpp"

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

int64_t job_id(const HttpRequest& req) {
  const std::string& text = req.matches.at(1);
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0)
    throw ApiError(404, "not_found", "no such job (ids are whole numbers from 1)");
  return id;
}

std::string sse(const std::string& name, const std::string& data, uint64_t seq) {
  return fmt::format("id: {}\nevent: {}\ndata: {}\n\n", seq, name, data);
}

void stream_events(JobRunner& jobs, int64_t id, HttpResponse& res) {
  const nlohmann::json first = jobs.view(id);  // 404 for an unknown job, before the stream starts
  const std::string state = first.at("state").get<std::string>();
  const bool ended = state == "done" || state == "failed" || state == "cancelled";
  struct Cursor {
    uint64_t next = 0;
    std::string opening;
    bool ended = false;
    std::chrono::steady_clock::time_point last_sent = std::chrono::steady_clock::now();
  };
  auto cursor = std::make_shared<Cursor>();
  cursor->opening = sse("state", first.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 0);
  cursor->ended = ended;
  res.set_header("Cache-Control", "no-cache");
  res.content_type = "text/event-stream";
  // Polled whenever the connection can take more (never blocks: an empty answer parks the
  // connection until the daemon wakes it).
  res.stream = [&jobs, id, cursor](bool& done) {
    Cursor& c = *cursor;
    if (!c.opening.empty()) {
      std::string text = std::move(c.opening);
      c.opening.clear();
      done = c.ended;
      c.last_sent = std::chrono::steady_clock::now();
      return text;
    }
    bool closed = false;
    const auto events = jobs.events().wait(id, c.next, std::chrono::milliseconds(0), closed);
    std::string text;
    for (const auto& e : events) text += sse(e.name, e.data, e.seq + 1);
    const auto now = std::chrono::steady_clock::now();
    if (text.empty() && !closed && now - c.last_sent >= kHeartbeat) text = ": keep-alive\n\n";
    if (!text.empty()) c.last_sent = now;
    done = closed;
    return text;
  };
}

}  // namespace

void add_job_routes(Router& server, ServiceContext& ctx) {
  add_route(server, ctx, Method::kPost, "/v1/jobs", Access::kWrite,
            [&ctx](const HttpRequest& req, HttpResponse& res) {
              send_json(res, runner(ctx).submit(json_body(req)), 201);
            });
  add_route(server, ctx, Method::kGet, "/v1/jobs", Access::kRead,
            [&ctx](const HttpRequest& req, HttpResponse& res) {
              const auto limit = int_param(req, "limit", 100, 1, 1000);
              send_json(res, {{"jobs", runner(ctx).list(static_cast<size_t>(limit))}});
            },
            {"limit"});
  add_route(
      server, ctx, Method::kGet, R"(/v1/jobs/(\d{1,64}))", Access::kRead,
      [&ctx](const HttpRequest& req, HttpResponse& res) { send_json(res, runner(ctx).view(job_id(req))); });
  add_route(
      server, ctx, Method::kDelete, R"(/v1/jobs/(\d{1,64}))", Access::kWrite,
      [&ctx](const HttpRequest& req, HttpResponse& res) { send_json(res, runner(ctx).cancel(job_id(req))); });
  add_route(
      server, ctx, Method::kGet, R"(/v1/jobs/(\d{1,64})/events)", Access::kRead,
      [&ctx](const HttpRequest& req, HttpResponse& res) { stream_events(runner(ctx), job_id(req), res); });
}

}  // namespace ktune::service
