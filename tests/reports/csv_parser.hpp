#pragma once
/// A small RFC 4180 reader for the tests, written apart from the writer it checks: quoted fields
/// with "" escapes, commas and line breaks inside quotes, CRLF or LF record ends.

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ktune::reports::testing {

using CsvTable = std::vector<std::vector<std::string>>;

inline CsvTable parse_csv(std::string_view text) {
  CsvTable table;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  bool was_quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      if (!field.empty() || was_quoted) throw std::runtime_error("quote inside an unquoted field");
      quoted = was_quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c == '\r' || c == '\n') {
      if (c == '\r') {
        if (i + 1 >= text.size() || text[i + 1] != '\n') throw std::runtime_error("bare CR outside quotes");
        ++i;
      }
      record.push_back(std::move(field));
      field.clear();
      was_quoted = false;
      table.push_back(std::move(record));
      record.clear();
    } else {
      if (was_quoted) throw std::runtime_error("text after a closing quote");
      field += c;
    }
  }
  if (quoted) throw std::runtime_error("unterminated quoted field");
  if (!field.empty() || !record.empty()) {
    record.push_back(std::move(field));
    table.push_back(std::move(record));
  }
  return table;
}

}  // namespace ktune::reports::testing
