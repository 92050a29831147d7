#pragma once
/// The client side of `ktune serve`, for the commands that talk to a server instead of a file
/// (`ktune query --server URL`, `ktune cache push --server URL`).

#include <optional>
#include <string>

namespace ktune::service {

struct HttpAnswer {
  int status = 0;
  std::string body;
  /// The server's error message (`{"error": {"message"}}`), or the body when it is not one.
  std::string error_message() const;
};

/// GET `target` ("/v1/best?kernel=...") from `server` ("http://host:port" or "https://...").
/// Throws ktune::Error(kBadInput) for a URL that is not http(s), kRuntime when the server cannot be
/// reached.
HttpAnswer http_get(const std::string& server, const std::string& target);
/// POST `body` as JSON to `target`, with `Authorization: Bearer <token>` when a token is given.
HttpAnswer http_post_json(const std::string& server, const std::string& target, const std::string& body,
                          const std::optional<std::string>& token);
/// `value` percent-encoded for a query string.
std::string url_encode(const std::string& value);

}  // namespace ktune::service
