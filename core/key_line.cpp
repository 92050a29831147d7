#include "core/key_line.hpp"

#include <vector>

#include <fmt/format.h>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "ktune/error.hpp"

namespace ktune {
namespace {

constexpr std::string_view kSpace = " \t\r\n";

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    i = line.find_first_not_of(kSpace, i);
    if (i == std::string_view::npos) break;
    const size_t end = std::min(line.find_first_of(kSpace, i), line.size());
    out.push_back(line.substr(i, end - i));
    i = end;
  }
  return out;
}

bool is_comment(const std::vector<std::string_view>& fields) { return fields.empty() || fields[0][0] == '#'; }

/// `name=digits[,name=digits...]` with lower-case names (the syntax only; Shape::parse checks values).
bool looks_like_shape(std::string_view s) {
  bool any = false;
  size_t i = 0;
  while (i < s.size()) {
    const size_t eq = s.find('=', i);
    if (eq == std::string_view::npos || eq == i) return false;
    for (size_t j = i; j < eq; ++j)
      if (!((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= '0' && s[j] <= '9') || s[j] == '_')) return false;
    const size_t comma = std::min(s.find(',', eq), s.size());
    if (comma == eq + 1) return false;
    for (size_t j = eq + 1; j < comma; ++j)
      if (s[j] < '0' || s[j] > '9') return false;
    any = true;
    i = comma + 1;
    if (comma == s.size()) break;
    if (i == s.size()) return false;  // a trailing comma
  }
  return any;
}

void check_field(std::string_view what, const std::string& value, bool may_be_empty) {
  if (value.empty() && !may_be_empty)
    throw Error(ErrorKind::kBadInput, fmt::format("a key line needs a {}", what));
  if (value.find_first_of(" \t\r\n#") != std::string::npos)
    throw Error(ErrorKind::kBadInput, fmt::format("the {} '{}' holds white space or '#'", what, value));
}

}  // namespace

std::string format_key_line(const KeyLine& key) {
  check_field("kernel", key.kernel, false);
  check_field("shape", key.shape, false);
  if (key.layout) check_field("layout", *key.layout, true);
  std::string line = fmt::format("{} {} {}", key.kernel, key.shape, to_string(key.dtype));
  if (key.layout && !key.layout->empty()) line += " " + *key.layout;
  return line;
}

bool is_key_line(std::string_view line) {
  const auto f = fields_of(line);
  return !is_comment(f) && (f.size() == 3 || f.size() == 4) && looks_like_shape(f[1]);
}

std::optional<KeyLine> parse_key_line(std::string_view line) {
  const auto f = fields_of(line);
  if (is_comment(f)) return std::nullopt;
  if (f.size() != 3 && f.size() != 4) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("expected KERNEL SHAPE DTYPE [LAYOUT] (e.g. 'gemm m=16,n=4096,k=4096 bf16 nt'), "
                            "got {} field(s): '{}'",
                            f.size(), fmt::join(f, " ")));
  }
  KeyLine key{std::string(f[0]), Shape::parse(f[1]).canonical(), dtype_from_string(f[2]), std::nullopt};
  if (f.size() == 4) key.layout = std::string(f[3]);
  return key;
}

}  // namespace ktune
