#pragma once
/// Helpers shared by the TOML readers (config spaces, shape sets, presets, user kernel descriptions): every
/// error is a ktune::Error(kBadInput) whose message starts with "FILE:LINE:" and whose where() is
/// "FILE:LINE".

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

namespace ktune::toml_read {

/// Throws ktune::Error(kBadInput, "FILE:LINE: message", where = "FILE:LINE").
[[noreturn]] void fail_at(const std::string& file, uint32_t line, const std::string& message);

/// The line a node starts on (0 when it has no source, e.g. built in code).
uint32_t line_of(const toml::node& node);

/// Parses a TOML document; a syntax error becomes fail_at() with toml++'s line and description.
toml::table parse_toml(std::string_view text, const std::string& file);
/// Reads and parses a file; a missing or unreadable file is a kBadInput error naming it.
toml::table parse_toml_file(const std::filesystem::path& path);

/// The table's entries in source order (toml++ keeps tables sorted by key).
std::vector<std::pair<std::string, const toml::node*>> entries_in_order(const toml::table& table);

/// Fails on the first key of `table` not in `allowed`, naming it and the allowed keys.
void reject_unknown_keys(const toml::table& table, std::initializer_list<std::string_view> allowed,
                         const std::string& file, std::string_view what);

/// The string at `key`; fails when missing (naming `what` and the table's line) or not a string.
std::string require_string(const toml::table& table, std::string_view key, const std::string& file,
                           uint32_t table_line, std::string_view what);
/// The integer at `node`; fails when it is not one.
int64_t require_integer(const toml::node& node, const std::string& file, std::string_view what);
/// An array of strings at `key`; fails when missing, empty or holding anything but strings.
std::vector<std::string> require_string_array(const toml::table& table, std::string_view key,
                                              const std::string& file, uint32_t table_line,
                                              std::string_view what);
/// An array of integers at `node` (a single integer is accepted as a one-element list).
std::vector<int64_t> require_integer_list(const toml::node& node, const std::string& file,
                                          std::string_view what);

}  // namespace ktune::toml_read
