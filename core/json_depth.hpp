#pragma once
/// The nesting bound on JSON ktune reads from others (HTTP bodies, `cache import` files, configs on
/// the command line). nlohmann-json parses deep documents, but dumping and walking them recurse, so
/// a body nested 100,000 deep crashed the server; nothing ktune stores needs more than a few levels.
/// Readers refuse a document past the bound before they parse it, so nothing of it is stored.

#include <string_view>

namespace ktune {

/// The deepest nesting of arrays and objects any JSON ktune reads may have.
inline constexpr int kMaxJsonDepth = 64;

/// The nesting depth of the arrays and objects in `text` (brackets inside strings, escaped quotes
/// included, do not count), or `limit` + 1 as soon as it passes `limit` (the scan stops there).
/// Works on any text: malformed JSON is the parser's to refuse.
int json_nesting_depth(std::string_view text, int limit = kMaxJsonDepth);

/// Whether `text` nests no deeper than kMaxJsonDepth.
inline bool json_depth_ok(std::string_view text) { return json_nesting_depth(text) <= kMaxJsonDepth; }

}  // namespace ktune
