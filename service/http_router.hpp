#pragma once
/// The service's routes, each registered once (method, path pattern, handler): dispatch finds the
/// route of a request, answers 405 when the path is a route's but the method is not, 404 when no
/// route has the path, and tells the daemon before the body is read whether a request goes to a
/// route that changes anything (so the token is checked first).

#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "service/http_message.hpp"

namespace ktune::service {

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse&)>;

class Router {
 public:
  /// `pattern` is a regex over the whole path; its groups become HttpRequest::matches[1...].
  void add(std::string method, std::string pattern, bool writes, HttpHandler handler);

  /// Answers `req` with its route's handler (req.matches set), else 405 or 404 in the error shape.
  /// Returns the route's pattern (the metrics label), "unmatched" when none.
  std::string dispatch(HttpRequest& req, HttpResponse& res) const;
  /// The route `method path` goes to writes (a token route), for checks before the body is read.
  bool writes(const std::string& method, const std::string& path) const;

 private:
  struct Route {
    std::string method, pattern;
    std::regex regex;
    bool writes = false;
    HttpHandler handler;
  };
  /// The route of `method path` (its match in `m`); null when none, `path_known` when another
  /// method's route has the path.
  const Route* find(const std::string& method, const std::string& path, std::smatch& m,
                    bool& path_known) const;
  std::vector<Route> routes_;
};

}  // namespace ktune::service
