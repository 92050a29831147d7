/// `GET /`: the dashboard page (service/dashboard_page.hpp).

#include <string>

#include "service/http_message.hpp"

#include "ktune/error.hpp"
#include "service/dashboard_page.hpp"
#include "service/routes.hpp"
#include "service/service_context.hpp"

namespace ktune::service {

std::string_view dashboard_page() {
  for (std::size_t i = 0; i < detail::kEmbeddedFileCount; ++i) {
    if (detail::kEmbeddedFiles[i].name == "dashboard.html") return detail::kEmbeddedFiles[i].text;
  }
  throw Error(ErrorKind::kNotFound, "the dashboard page (dashboard.html) is not embedded");
}

void add_dashboard_routes(Router& server, ServiceContext& ctx) {
  add_route(server, ctx, Method::kGet, "/", Access::kRead, [](const HttpRequest&, HttpResponse& res) {
    const std::string_view page = dashboard_page();
    res.status = 200;
    // The page runs only its own inline script and talks only to this server.
    res.set_header("Content-Security-Policy",
                   "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                   "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'");
    res.set_header("Cache-Control", "no-cache");
    res.set_content(std::string(page), "text/html; charset=utf-8");
  });
}

}  // namespace ktune::service
