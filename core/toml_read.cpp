#include "core/toml_read.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::toml_read {

void fail_at(const std::string& file, uint32_t line, const std::string& message) {
  const std::string where = fmt::format("{}:{}", file, line);
  throw Error(ErrorKind::kBadInput, fmt::format("{}: {}", where, message), "", where);
}

uint32_t line_of(const toml::node& node) { return node.source().begin.line; }

toml::table parse_toml(std::string_view text, const std::string& file) {
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    fail_at(file, e.source().begin.line, fmt::format("bad TOML: {}", e.description()));
  }
}

toml::table parse_toml_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ErrorKind::kBadInput, fmt::format("cannot open '{}'", path.string()), "", path.string());
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_toml(text.str(), path.string());
}

std::vector<std::pair<std::string, const toml::node*>> entries_in_order(const toml::table& table) {
  std::vector<std::pair<std::string, const toml::node*>> out;
  for (auto&& [key, node] : table) out.emplace_back(std::string(key.str()), &node);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    const auto& sa = a.second->source().begin;
    const auto& sb = b.second->source().begin;
    return sa.line != sb.line ? sa.line < sb.line : sa.column < sb.column;
  });
  return out;
}

void reject_unknown_keys(const toml::table& table, std::initializer_list<std::string_view> allowed,
                         const std::string& file, std::string_view what) {
  for (auto&& [key, node] : table) {
    if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end()) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail_at(file, line_of(node),
              fmt::format("unknown key '{}' in {} (allowed: {})", key.str(), what, list));
    }
  }
}

std::string require_string(const toml::table& table, std::string_view key, const std::string& file,
                           uint32_t table_line, std::string_view what) {
  const toml::node* node = table.get(key);
  if (node == nullptr) fail_at(file, table_line, fmt::format("{} has no '{}'", what, key));
  if (!node->is_string())
    fail_at(file, line_of(*node), fmt::format("'{}' in {} must be a string", key, what));
  return node->value<std::string>().value();
}

int64_t require_integer(const toml::node& node, const std::string& file, std::string_view what) {
  if (!node.is_integer()) fail_at(file, line_of(node), fmt::format("{} must be an integer", what));
  return node.value<int64_t>().value();
}

std::vector<std::string> require_string_array(const toml::table& table, std::string_view key,
                                              const std::string& file, uint32_t table_line,
                                              std::string_view what) {
  const toml::node* node = table.get(key);
  if (node == nullptr) fail_at(file, table_line, fmt::format("{} has no '{}'", what, key));
  const toml::array* arr = node->as_array();
  if (arr == nullptr || arr->empty()) {
    fail_at(file, line_of(*node), fmt::format("'{}' in {} must be a non-empty array of strings", key, what));
  }
  std::vector<std::string> out;
  for (const toml::node& item : *arr) {
    if (!item.is_string())
      fail_at(file, line_of(item), fmt::format("'{}' in {} holds a non-string", key, what));
    out.push_back(item.value<std::string>().value());
  }
  return out;
}

std::vector<int64_t> require_integer_list(const toml::node& node, const std::string& file,
                                          std::string_view what) {
  if (node.is_integer()) return {node.value<int64_t>().value()};
  const toml::array* arr = node.as_array();
  if (arr == nullptr || arr->empty()) {
    fail_at(file, line_of(node), fmt::format("{} must be an integer or a non-empty array of integers", what));
  }
  std::vector<int64_t> out;
  for (const toml::node& item : *arr) out.push_back(require_integer(item, file, what));
  return out;
}

}  // namespace ktune::toml_read
