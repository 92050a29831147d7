#include "core/shape.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune {
namespace {

/// Largest dimension value: 2^31-1, the largest extent a kernel's int index arithmetic can take.
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorKind::kBadInput, message); }

bool valid_name(std::string_view name) {
  if (name.empty() || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Shape Shape::parse(std::string_view text) {
  const std::string whole(text);
  text = trim(text);
  if (text.empty()) bad("empty shape: expected name=value[,name=value...], e.g. m=16,n=4096,k=4096");
  Shape shape;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view part = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (part.empty()) bad(fmt::format("shape '{}': empty dimension (stray comma)", whole));
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      const bool unnamed = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
        return (c >= '0' && c <= '9') || c == 'x' || c == 'X';
      });
      if (unnamed) {
        bad(
            fmt::format("shape '{}': dimensions are named, as name=value pairs: e.g. m=16,n=4096,k=4096 for "
                        "a gemm (m rows of A and C, n columns of B and C, k the reduction); the shape sets "
                        "under configs/shapes/ name every kernel's",
                        whole));
      }
      bad(fmt::format("shape '{}': dimension '{}' has no value (expected {}=<integer>)", whole, part, part));
    }
    const std::string_view name = trim(part.substr(0, eq));
    const std::string_view value = trim(part.substr(eq + 1));
    if (!valid_name(name)) {
      bad(fmt::format("shape '{}': bad dimension name '{}' (lower-case letters, digits, '_')", whole, name));
    }
    if (value.empty()) bad(fmt::format("shape '{}': dimension '{}' has no value", whole, name));
    if (value.front() == '-') {
      bad(fmt::format("shape '{}': '{}={}' is negative; dimensions must be in [1, {}]", whole, name, value,
                      kMaxDim));
    }
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    const bool all_digits =
        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!all_digits || (ec != std::errc() && ec != std::errc::result_out_of_range) ||
        end != value.data() + value.size()) {
      bad(fmt::format("shape '{}': '{}={}' is not an integer", whole, name, value));
    }
    if (ec == std::errc::result_out_of_range || v > kMaxDim) {
      bad(fmt::format("shape '{}': '{}={}' is past the largest dimension 2^31-1 = {}", whole, name, value,
                      kMaxDim));
    }
    if (v < 1) bad(fmt::format("shape '{}': '{}={}' must be at least 1", whole, name, value));
    const bool repeated =
        std::any_of(shape.dims_.begin(), shape.dims_.end(), [&](const auto& d) { return d.first == name; });
    if (repeated) bad(fmt::format("shape '{}': dimension '{}' is given twice", whole, name));
    shape.dims_.emplace_back(std::string(name), v);
    if (comma == text.size()) break;
  }
  return shape;
}

Shape Shape::normalized(std::span<const std::string> dims) const {
  for (const auto& [name, value] : dims_) {
    if (std::find(dims.begin(), dims.end(), name) == dims.end()) {
      bad(fmt::format("shape '{}': unknown dimension '{}' (the kernel takes {})", canonical(), name,
                      fmt::join(dims, ",")));
    }
  }
  Shape out;
  for (const std::string& name : dims) {
    const auto it = std::find_if(dims_.begin(), dims_.end(), [&](const auto& d) { return d.first == name; });
    if (it == dims_.end()) {
      bad(fmt::format("shape '{}': missing dimension '{}' (the kernel takes {})", canonical(), name,
                      fmt::join(dims, ",")));
    }
    out.dims_.push_back(*it);
  }
  return out;
}

std::string Shape::canonical() const {
  std::string out;
  for (const auto& [name, value] : dims_) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}={}", name, value);
  }
  return out;
}

int64_t Shape::at(std::string_view name) const {
  for (const auto& [n, v] : dims_) {
    if (n == name) return v;
  }
  bad(fmt::format("shape '{}' has no dimension '{}'", canonical(), name));
}

double Shape::distance(const Shape& other) const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (dims_.size() != other.dims_.size()) return kInf;
  double sum = 0;
  for (const auto& dim : dims_) {  // not a structured binding: clang 14 cannot capture one in a lambda
    const auto it = std::find_if(other.dims_.begin(), other.dims_.end(),
                                 [&](const auto& d) { return d.first == dim.first; });
    if (it == other.dims_.end()) return kInf;
    sum += std::abs(std::log2(static_cast<double>(dim.second) / static_cast<double>(it->second)));
  }
  return sum;
}

}  // namespace ktune
