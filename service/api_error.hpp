#pragma once
/// The service's one error shape: every failed request is answered with
/// `{"error": {"kind": "...", "message": "..."}}` and a 4xx/5xx status (docs/service.md). Routes
/// throw ApiError (or ktune::Error, mapped by kind); `guard` turns whatever a handler throws into
/// that answer so no request can take the server down.

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "service/http_message.hpp"

namespace ktune::service {

/// A request the service refuses: the HTTP status, a short kind word ("bad_request",
/// "unauthorized", "not_found", "read_only", "conflict", "too_large", "unavailable") and a message
/// that names the bad part of the request.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string kind, const std::string& message)
      : std::runtime_error(message), status_(status), kind_(std::move(kind)) {}
  int status() const { return status_; }
  const std::string& kind() const { return kind_; }

 private:
  int status_;
  std::string kind_;
};

/// 400 bad_request naming the request part.
[[noreturn]] void bad_request(const std::string& message);

/// Serialises `doc` (invalid UTF-8 in strings is replaced, never thrown on) and sets it as the body.
void send_json(HttpResponse& res, const nlohmann::json& doc, int status = 200);
/// The error document with `status`.
void send_error(HttpResponse& res, int status, std::string_view kind, std::string_view message);
/// The kind word of a status the server itself produced (404 unknown route, 413 body too large).
std::string_view kind_for_status(int status);

using RouteHandler = std::function<void(const HttpRequest&, HttpResponse&)>;
/// Runs `handler`, answering any exception it throws with the error document: ApiError with its
/// status; ktune::Error by kind (bad input 400, not found 404, no device 503, runtime 500); JSON
/// errors 400; anything else 500.
void guard(const RouteHandler& handler, const HttpRequest& req, HttpResponse& res);

}  // namespace ktune::service
