#include <httplib.h>

#include "service/auth.hpp"
#include "service/query_params.hpp"
#include "service/service_context.hpp"

namespace ktune::service {
namespace {

thread_local std::string current_route;

void require_write_access(const ServiceContext& ctx, const httplib::Request& req) {
  if (ctx.read_only)
    throw ApiError(405, "read_only", "this server runs with --read-only: it serves lookups and reports only");
  if (!ctx.token) {
    throw ApiError(401, "unauthorized",
                   "this server was started without --token-file, so it accepts no changes");
  }
  if (!req.has_header("Authorization"))
    throw ApiError(401, "unauthorized", "this route needs the header 'Authorization: Bearer <token>'");
  if (!bearer_matches(req.get_header_value("Authorization"), *ctx.token))
    throw ApiError(401, "unauthorized", "the bearer token in the Authorization header is wrong");
}

}  // namespace

std::string take_route_label() {
  std::string label = current_route.empty() ? std::string("unmatched") : current_route;
  current_route.clear();
  return label;
}

void add_route(httplib::Server& server, ServiceContext& ctx, Method method, const std::string& pattern,
               Access access, RouteHandler handler, std::vector<std::string> params) {
  auto wrapped = [&ctx, pattern, access, handler = std::move(handler), params = std::move(params)](
                     const httplib::Request& req, httplib::Response& res) {
    current_route = pattern;
    guard(
        [&](const httplib::Request& r, httplib::Response& s) {
          if (access == Access::kWrite) require_write_access(ctx, r);
          require_known_params(r, params);
          handler(r, s);
        },
        req, res);
  };
  switch (method) {
    case Method::kGet:
      server.Get(pattern, std::move(wrapped));
      break;
    case Method::kPost:
      server.Post(pattern, std::move(wrapped));
      break;
    case Method::kDelete:
      server.Delete(pattern, std::move(wrapped));
      break;
  }
}

}  // namespace ktune::service
