#pragma once
/// The service's route groups, one file each; Server registers them all (service/server.cpp).

#include "service/http_router.hpp"

namespace ktune::service {

struct ServiceContext;

/// GET / (the dashboard page, service/dashboard_routes.cpp).
void add_dashboard_routes(Router& server, ServiceContext& ctx);
/// GET /v1/health, /v1/version, /v1/devices, /metrics (service/info_routes.cpp).
void add_info_routes(Router& server, ServiceContext& ctx);
/// GET /v1/best, POST /v1/best:batch (service/lookup_routes.cpp).
void add_lookup_routes(Router& server, ServiceContext& ctx);
/// GET and POST /v1/results (service/result_routes.cpp).
void add_result_routes(Router& server, ServiceContext& ctx);
/// GET /v1/report (service/report_routes.cpp).
void add_report_routes(Router& server, ServiceContext& ctx);
/// POST/GET /v1/jobs, GET/DELETE /v1/jobs/{id}, GET /v1/jobs/{id}/events (service/job_routes.cpp).
void add_job_routes(Router& server, ServiceContext& ctx);

}  // namespace ktune::service
