/// `GET /v1/report?format=<a name of reports::formats()>&kernel=&gpu=&dtype=&winners=`: the report
/// writers of `ktune report` over the live database, each sent as its table row's media type.

#include <algorithm>
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

void add_report_routes(Router& server, ServiceContext& ctx) {
  add_route(server, ctx, Method::kGet, "/v1/report", Access::kRead,
            [&ctx](const HttpRequest& req, HttpResponse& res) {
              const std::string name = optional_param(req, "format").value_or("html");
              const auto choices = reports::format_choices();
              if (std::find(choices.begin(), choices.end(), name) == choices.end())
                bad_request("parameter 'format' must be " + reports::format_names());
              const reports::FormatEntry format = reports::find_format(name);
              reports::ReportQuery query;
              query.filter.kernel = optional_param(req, "kernel").value_or("");
              query.filter.gpu_name = optional_param(req, "gpu").value_or("");
              query.filter.dtype = dtype_filter_param(req, "dtype");
              query.winners_only = bool_param(req, "winners", false);
              reports::ReporterOptions options;
              if (!ctx.chart_js.empty()) options.chart_js = ctx.chart_js;
              const reports::ReportData data = reports::load_report_data(ctx.readers->get(), query);
              std::ostringstream out;
              format.make(options)->write(data, out);
              res.status = 200;
              res.set_content(out.str(), format.media_type);
            },
            {"format", "kernel", "gpu", "dtype", "winners"});
}

}  // namespace ktune::service
