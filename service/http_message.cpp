#include "service/http_message.hpp"

#include <algorithm>
#include <cctype>

namespace ktune::service {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+' && plus_is_space) {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
               hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool HttpRequest::has_header(std::string_view name) const { return header_count(name) > 0; }

std::string HttpRequest::get_header_value(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (same_name(k, name)) return v;
  }
  return {};
}

size_t HttpRequest::header_count(std::string_view name) const {
  return static_cast<size_t>(
      std::count_if(headers.begin(), headers.end(), [&](const auto& h) { return same_name(h.first, name); }));
}

}  // namespace ktune::service
