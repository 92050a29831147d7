#include "service/api_error.hpp"

#include "service/http_message.hpp"

#include <nlohmann/json.hpp>

#include "ktune/error.hpp"

namespace ktune::service {

void bad_request(const std::string& message) { throw ApiError(400, "bad_request", message); }

void send_json(HttpResponse& res, const nlohmann::json& doc, int status) {
  res.status = status;
  res.set_content(doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                  "application/json");
}

void send_error(HttpResponse& res, int status, std::string_view kind, std::string_view message) {
  send_json(res, {{"error", {{"kind", kind}, {"message", message}}}}, status);
}

std::string_view kind_for_status(int status) {
  switch (status) {
    case 400:
      return "bad_request";
    case 401:
      return "unauthorized";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 409:
      return "conflict";
    case 413:
      return "too_large";
    case 414:
      return "too_large";
    case 431:
      return "too_large";
    case 503:
      return "unavailable";
    default:
      return status >= 500 ? "internal" : "bad_request";
  }
}

void guard(const RouteHandler& handler, const HttpRequest& req, HttpResponse& res) {
  try {
    handler(req, res);
  } catch (const ApiError& e) {
    send_error(res, e.status(), e.kind(), e.what());
  } catch (const Error& e) {
    switch (e.kind()) {
      case ErrorKind::kBadInput:
        send_error(res, 400, "bad_request", e.what());
        break;
      case ErrorKind::kNotFound:
        send_error(res, 404, "not_found", e.what());
        break;
      case ErrorKind::kNoDevice:
        send_error(res, 503, "unavailable", e.what());
        break;
      case ErrorKind::kRuntime:
        send_error(res, 500, "internal", e.what());
        break;
    }
  } catch (const nlohmann::json::exception& e) {
    send_error(res, 400, "bad_request", std::string("malformed JSON: ") + e.what());
  } catch (const std::bad_alloc&) {
    send_error(res, 503, "unavailable", "out of memory answering this request");
  } catch (const std::exception& e) {
    send_error(res, 500, "internal", e.what());
  }
}

}  // namespace ktune::service
