#include "tuner/space/canonical_name.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::tuner {
namespace {

bool separates(std::string_view literal) {
  return std::any_of(literal.begin(), literal.end(),
                     [](char c) { return !(c >= '0' && c <= '9') && c != '-'; });
}

}  // namespace

std::vector<std::string> pattern_placeholders(std::string_view pattern) {
  std::vector<std::string> out;
  size_t pos = 0;
  bool last_was_placeholder = false;
  size_t literal_start = 0;
  while (pos < pattern.size()) {
    const char c = pattern[pos];
    if (c == '}') throw std::invalid_argument(fmt::format("unbalanced '}}' at position {}", pos));
    if (c != '{') {
      ++pos;
      continue;
    }
    const size_t close = pattern.find('}', pos);
    if (close == std::string_view::npos) {
      throw std::invalid_argument(fmt::format("unclosed '{{' at position {}", pos));
    }
    const std::string_view name = pattern.substr(pos + 1, close - pos - 1);
    if (name.empty() || name.find('{') != std::string_view::npos) {
      throw std::invalid_argument(fmt::format("bad placeholder '{}'", pattern.substr(pos, close - pos + 1)));
    }
    if (last_was_placeholder && !separates(pattern.substr(literal_start, pos - literal_start))) {
      throw std::invalid_argument(
          fmt::format("placeholder '{{{}}}' follows the previous one without a separator that is not a digit "
                      "or '-', so names could be ambiguous",
                      name));
    }
    out.emplace_back(name);
    last_was_placeholder = true;
    pos = close + 1;
    literal_start = pos;
  }
  return out;
}

std::string check_name_pattern(std::string_view pattern, std::span<const std::string> params) {
  std::vector<std::string> used;
  try {
    used = pattern_placeholders(pattern);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  for (const auto& u : used) {
    if (std::find(params.begin(), params.end(), u) == params.end()) {
      return fmt::format("placeholder '{{{}}}' names no parameter", u);
    }
  }
  for (const auto& p : params) {
    if (std::find(used.begin(), used.end(), p) == used.end()) {
      return fmt::format("parameter '{}' is not in the name pattern, so two configs could share a name", p);
    }
  }
  return {};
}

std::string expand_name_pattern(std::string_view pattern, const Config& config) {
  std::string out;
  out.reserve(pattern.size() + 16);
  size_t pos = 0;
  while (pos < pattern.size()) {
    const size_t open = pattern.find('{', pos);
    if (open == std::string_view::npos) {
      out.append(pattern.substr(pos));
      break;
    }
    out.append(pattern.substr(pos, open - pos));
    const size_t close = pattern.find('}', open);
    if (close == std::string_view::npos) {
      throw Error(ErrorKind::kBadInput, fmt::format("name pattern '{}' has an unclosed '{{'", pattern));
    }
    out += std::to_string(config.at(pattern.substr(open + 1, close - open - 1)));
    pos = close + 1;
  }
  return out;
}

std::string canonical_name(std::string_view kernel, DType dtype, std::string_view layout,
                           std::string_view pattern, const Config& config) {
  std::string out;
  out.reserve(64);
  out.append(kernel).append(".").append(to_string(dtype)).append(".");
  if (!layout.empty()) out.append(layout).append(".");
  out += expand_name_pattern(pattern, config);
  return out;
}

}  // namespace ktune::tuner
