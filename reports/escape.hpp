#pragma once
/// Escaping text for each output format. Every name in a report (GPU, kernel, config, shape,
/// reason) comes from a database that anyone may have written, so every writer escapes every
/// string through one of these functions.

#include <string>
#include <string_view>

namespace ktune::reports {

/// `text` with each invalid UTF-8 sequence replaced by U+FFFD, so that JSON and HTML stay valid.
std::string sanitize_utf8(std::string_view text);
/// sanitize_utf8 in place; leaves valid text untouched (no copy).
void sanitize_utf8_in_place(std::string& text);

/// Appends `text` as a JSON string literal (with quotes). `text` must be valid UTF-8.
void append_json_string(std::string& out, std::string_view text);

/// Makes JSON text safe inside an HTML <script> element: '<', '>', '&', U+2028 and U+2029 become
/// \uXXXX escapes. Correct for JSON (these characters appear only inside strings).
std::string json_for_script(std::string_view json);

/// Appends `text` with &, <, >, " and ' escaped for HTML text and attribute values.
void append_html(std::string& out, std::string_view text);
/// `text` escaped for HTML.
std::string html(std::string_view text);

/// Appends one RFC 4180 field: quoted (with "" for ") when it holds a comma, quote, CR or LF.
void append_csv_field(std::string& out, std::string_view text);

/// `text` for a Markdown table cell: '|' and '\' escaped, '<' and '>' as entities, line breaks
/// as spaces.
std::string markdown_cell(std::string_view text);

}  // namespace ktune::reports
