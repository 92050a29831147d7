#include "service/http_message.hpp"

#include "service/auth.hpp"
#include "service/query_params.hpp"
#include "service/service_context.hpp"

namespace ktune::service {

void require_write_access(const ServiceContext& ctx, const HttpRequest& req) {
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

void add_route(Router& server, ServiceContext& ctx, Method method, const std::string& pattern, Access access,
               RouteHandler handler, std::vector<std::string> params) {
  auto wrapped = [&ctx, pattern, access, handler = std::move(handler), params = std::move(params)](
                     const HttpRequest& req, HttpResponse& res) {
    guard(
        [&](const HttpRequest& r, HttpResponse& s) {
          if (access == Access::kWrite) require_write_access(ctx, r);
          require_known_params(r, params);
          handler(r, s);
        },
        req, res);
  };
  const char* name = method == Method::kGet ? "GET" : method == Method::kPost ? "POST" : "DELETE";
  server.add(name, pattern, access == Access::kWrite, std::move(wrapped));
}

}  // namespace ktune::service
