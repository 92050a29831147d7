#include "service/http_router.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "service/api_error.hpp"

namespace ktune::service {

void Router::add(std::string method, std::string pattern, bool writes, HttpHandler handler) {
  std::regex regex(pattern);
  routes_.push_back({std::move(method), std::move(pattern), std::move(regex), writes, std::move(handler)});
}

const Router::Route* Router::find(const std::string& method, const std::string& path, std::smatch& m,
                                  bool& path_known) const {
  path_known = false;
  for (const Route& r : routes_) {
    if (!std::regex_match(path, m, r.regex)) continue;
    path_known = true;
    if (r.method == method) return &r;
  }
  return nullptr;
}

std::string Router::dispatch(HttpRequest& req, HttpResponse& res) const {
  std::smatch m;
  bool path_known = false;
  const Route* r = find(req.method, req.path, m, path_known);
  if (r == nullptr) {
    if (path_known) {
      send_error(res, 405, "method_not_allowed", fmt::format("{} does not answer {}", req.path, req.method));
    } else {
      send_error(res, 404, "not_found",
                 fmt::format("no route {} {} (docs/service.md lists them)", req.method, req.path));
    }
    return "unmatched";
  }
  req.matches.clear();
  for (const auto& group : m) req.matches.push_back(group.str());
  r->handler(req, res);
  return r->pattern;
}

bool Router::writes(const std::string& method, const std::string& path) const {
  // Before every body: only routes that write and take this method are matched against the path.
  return std::any_of(routes_.begin(), routes_.end(), [&](const Route& r) {
    return r.writes && r.method == method && std::regex_match(path, r.regex);
  });
}

}  // namespace ktune::service
