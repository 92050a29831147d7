/// `GET /v1/report?format=csv|json|md|html&kernel=&gpu=&dtype=&winners=`: the report writers of
/// `ktune report` over the live database.

#include <sstream>
#include <string>

#include "service/http_message.hpp"

#include "reports/report_loader.hpp"
#include "reports/reporter.hpp"
#include "service/query_params.hpp"
#include "service/reader_pool.hpp"
#include "service/routes.hpp"
#include "service/service_context.hpp"

namespace ktune::service {
namespace {

const char* content_type(reports::Format format) {
  switch (format) {
    case reports::Format::kCsv:
      return "text/csv; charset=utf-8";
    case reports::Format::kJson:
      return "application/json";
    case reports::Format::kMarkdown:
      return "text/markdown; charset=utf-8";
    case reports::Format::kHtml:
      return "text/html; charset=utf-8";
  }
  return "application/octet-stream";
}

}  // namespace

void add_report_routes(Router& server, ServiceContext& ctx) {
  add_route(server, ctx, Method::kGet, "/v1/report", Access::kRead,
            [&ctx](const HttpRequest& req, HttpResponse& res) {
              const std::string name = optional_param(req, "format").value_or("html");
              if (name != "csv" && name != "json" && name != "md" && name != "markdown" && name != "html")
                bad_request("parameter 'format' must be csv, json, md or html");
              const reports::Format format = reports::parse_format(name);
              reports::ReportQuery query;
              query.filter.kernel = optional_param(req, "kernel").value_or("");
              query.filter.gpu_name = optional_param(req, "gpu").value_or("");
              query.filter.dtype = optional_param(req, "dtype").value_or("");
              query.winners_only = bool_param(req, "winners", false);
              reports::ReporterOptions options;
              if (!ctx.chart_js.empty()) options.chart_js = ctx.chart_js;
              const reports::ReportData data = reports::load_report_data(ctx.readers->get(), query);
              std::ostringstream out;
              reports::make_reporter(format, options)->write(data, out);
              res.status = 200;
              res.set_content(out.str(), content_type(format));
            },
            {"format", "kernel", "gpu", "dtype", "winners"});
}

}  // namespace ktune::service
