#pragma once
/// A request as the routes read it and the answer they fill: what service/http_daemon.cpp parses
/// from the connection and sends back. Header names compare without case.

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ktune::service {

struct HttpRequest {
  std::string method;                                        ///< "GET", "POST", ...
  std::string path;                                          ///< decoded, without the query string
  std::vector<std::pair<std::string, std::string>> query;    ///< decoded pairs, in order
  std::vector<std::pair<std::string, std::string>> headers;  ///< as sent, in order
  std::string body;
  std::vector<std::string> matches;  ///< the route pattern's match: [0] the path, [1...] its groups

  bool has_header(std::string_view name) const;
  /// The first value of header `name`; "" when absent.
  std::string get_header_value(std::string_view name) const;
  /// How many headers are called `name`.
  size_t header_count(std::string_view name) const;
};

/// Percent-decodes `text` ('+' a space when `plus_is_space`, as in a query string); a malformed
/// escape stays as it is.
std::string percent_decode(std::string_view text, bool plus_is_space);

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain";
  std::vector<std::pair<std::string, std::string>> headers;
  /// A streamed body (Server-Sent Events): called whenever the connection can take more; returns
  /// the text to send now ("" when there is nothing yet: the connection then waits, without a
  /// thread, until the daemon's next wake-up) and sets `ended` when the stream is over.
  std::function<std::string(bool& ended)> stream;

  void set_content(std::string text, std::string type) {
    body = std::move(text);
    content_type = std::move(type);
  }
  void set_header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
};

}  // namespace ktune::service
