#include "kernel_templates/user_kernel/kernel_source_scan.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace ktune::kernel_templates {
namespace {

/// The source with comments and string literals blanked (newlines kept, so offsets keep lines).
std::string without_comments(std::string_view s) {
  std::string out(s);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out.compare(i, 2, "//") == 0) {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out.compare(i, 2, "/*") == 0) {
      std::size_t j = i;
      for (; j < out.size() && out.compare(j, 2, "*/") != 0; ++j) {
        if (out[j] != '\n') out[j] = ' ';
      }
      for (std::size_t k = j; k < out.size() && k < j + 2; ++k) out[k] = ' ';
      i = j + 1;
    } else if (out[i] == '"') {
      std::size_t j = i + 1;
      for (; j < out.size() && out[j] != '"' && out[j] != '\n'; ++j) {
        if (out[j] == '\\') ++j;
      }
      for (std::size_t k = i; k <= j && k < out.size(); ++k) out[k] = ' ';
      i = j;
    }
  }
  return out;
}

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// Whether `word` stands alone at `pos` (no identifier character either side).
bool word_at(const std::string& s, std::size_t pos, std::string_view word) {
  if (s.compare(pos, word.size(), word) != 0) return false;
  if (pos > 0 && is_ident_char(s[pos - 1])) return false;
  const std::size_t end = pos + word.size();
  return end >= s.size() || !is_ident_char(s[end]);
}

/// Index just past the bracket that closes the one at `open` ('<' or '('), counting top-level
/// commas into `commas`; npos when unbalanced.
std::size_t close_of(const std::string& s, std::size_t open, int* commas) {
  int angle = 0;
  int paren = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(') ++paren;
    if (c == ')') --paren;
    if (c == '<' && paren == 0) ++angle;
    if (c == '>' && paren == 0) --angle;
    if (c == ',' && commas != nullptr && angle == 1 && paren == 0) ++*commas;
    const bool closed = s[open] == '<' ? (angle == 0 && paren == 0) : (paren == 0 && c == ')');
    if (closed && i > open) return i + 1;
  }
  return std::string::npos;
}

/// The parameter names (KernelTemplateDecl::params) of the list between the parentheses at `open`
/// and `close`.
std::vector<std::string> parameter_names(const std::string& s, std::size_t open, std::size_t close) {
  static constexpr std::string_view kQualifiers[] = {
      "const", "volatile", "__restrict__", "__grid_constant__", "signed", "unsigned", "short", "long"};
  std::vector<std::string> out;
  std::vector<std::string_view> words;  // of the parameter being read, the qualifiers left out
  bool in_default = false;              // past its `=`
  bool blank = true;                    // an empty list: no parameter
  auto finish = [&] {
    out.emplace_back(words.size() >= 2 ? words.back() : std::string_view());
    words.clear();
    in_default = false;
  };
  int depth = 0;
  for (std::size_t i = open + 1; i < close; ++i) {
    const char c = s[i];
    blank = blank && std::isspace(static_cast<unsigned char>(c)) != 0;
    if (c == '<' || c == '(' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      finish();
      continue;
    }
    if (c == '=' && depth == 0) in_default = true;
    if (in_default || depth > 0 || !is_ident_char(c) || is_ident_char(s[i - 1])) continue;
    std::size_t end = i;
    while (end < close && is_ident_char(s[end])) ++end;
    const std::string_view word(s.data() + i, end - i);
    const bool qualifier =
        std::find(std::begin(kQualifiers), std::end(kQualifiers), word) != std::end(kQualifiers);
    if (!qualifier && std::isdigit(static_cast<unsigned char>(c)) == 0) words.push_back(word);
    i = end - 1;
  }
  if (!blank) finish();
  return out;
}

uint32_t line_at(const std::string& s, std::size_t pos) {
  uint32_t line = 1;
  for (std::size_t i = 0; i < pos && i < s.size(); ++i) line += s[i] == '\n' ? 1 : 0;
  return line;
}

}  // namespace

std::optional<KernelTemplateDecl> find_kernel_template(std::string_view source, std::string_view function) {
  const std::string s = without_comments(source);
  for (std::size_t pos = s.find("template"); pos != std::string::npos; pos = s.find("template", pos + 1)) {
    if (!word_at(s, pos, "template")) continue;
    std::size_t open = pos + 8;
    while (open < s.size() && std::isspace(static_cast<unsigned char>(s[open])) != 0) ++open;
    if (open >= s.size() || s[open] != '<') continue;
    int commas = 0;
    const std::size_t close = close_of(s, open, &commas);
    if (close == std::string::npos) return std::nullopt;
    bool empty = true;
    for (std::size_t i = open + 1; i + 1 < close; ++i)
      empty = empty && std::isspace(static_cast<unsigned char>(s[i])) != 0;
    // The declarator: up to the function's '(' (skipping __launch_bounds__(...) and the like).
    bool global = false;
    std::size_t i = close;
    while (i < s.size() && s[i] != ';' && s[i] != '{') {
      if (is_ident_char(s[i]) && (i == 0 || !is_ident_char(s[i - 1]))) {
        std::size_t end = i;
        while (end < s.size() && is_ident_char(s[end])) ++end;
        const std::string_view word(s.data() + i, end - i);
        std::size_t next = end;
        while (next < s.size() && std::isspace(static_cast<unsigned char>(s[next])) != 0) ++next;
        if (word == "__global__") global = true;
        if (next < s.size() && s[next] == '(') {
          if (word == function && global) {
            const std::size_t after = close_of(s, next, nullptr);
            return KernelTemplateDecl{empty ? 0 : commas + 1, line_at(s, pos),
                                      after == std::string::npos ? std::vector<std::string>{}
                                                                 : parameter_names(s, next, after - 1)};
          }
          if (word.substr(0, 2) != "__") break;  // another function's declarator
          const std::size_t after = close_of(s, next, nullptr);
          if (after == std::string::npos) break;
          i = after;
          continue;
        }
        i = end;
        continue;
      }
      ++i;
    }
  }
  return std::nullopt;
}

}  // namespace ktune::kernel_templates
