#include "service/http_client.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "ktune/error.hpp"

namespace ktune::service {
namespace {

/// A lookup is answered in microseconds; a push of a large export may take a while to import.
constexpr int kConnectTimeoutS = 5;
constexpr int kReadTimeoutS = 300;

httplib::Client client_for(const std::string& server) {
  if (server.rfind("http://", 0) != 0 && server.rfind("https://", 0) != 0)
    throw Error(ErrorKind::kBadInput,
                fmt::format("--server '{}' must start with http:// or https://", server));
  std::string base = server;
  while (!base.empty() && base.back() == '/') base.pop_back();
  httplib::Client client(base);
  if (!client.is_valid())
    throw Error(ErrorKind::kBadInput, fmt::format("--server '{}' is not a URL", server));
  client.set_connection_timeout(kConnectTimeoutS, 0);
  client.set_read_timeout(kReadTimeoutS, 0);
  return client;
}

HttpAnswer answer_of(const std::string& server, const httplib::Result& result) {
  if (!result) {
    throw Error(ErrorKind::kRuntime, fmt::format("cannot reach the ktune server at {}: {}", server,
                                                 httplib::to_string(result.error())));
  }
  return {result->status, result->body};
}

}  // namespace

std::string HttpAnswer::error_message() const {
  const auto doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object() && doc.contains("error") && doc["error"].is_object() &&
      doc["error"].contains("message") && doc["error"]["message"].is_string())
    return doc["error"]["message"].get<std::string>();
  return body;
}

HttpAnswer http_get(const std::string& server, const std::string& target) {
  auto client = client_for(server);
  return answer_of(server, client.Get(target));
}

HttpAnswer http_post_json(const std::string& server, const std::string& target, const std::string& body,
                          const std::optional<std::string>& token) {
  auto client = client_for(server);
  httplib::Headers headers;
  if (token) headers.emplace("Authorization", "Bearer " + *token);
  return answer_of(server, client.Post(target, headers, body, "application/json"));
}

std::string url_encode(const std::string& value) {
  std::string out;
  for (const unsigned char c : value) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

}  // namespace ktune::service
