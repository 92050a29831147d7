#include "cli/resume_command.hpp"

#include <string_view>

namespace ktune::cli {

std::string shell_quote(const std::string& text) {
  constexpr std::string_view kSafe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-";
  if (!text.empty() && text.find_first_not_of(kSafe) == std::string::npos) return text;
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string resume_command(const std::vector<std::string>& argv, const ResumeEdits& edits) {
  std::vector<std::string> args = argv;
  bool has_db = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--db" || args[i].rfind("--db=", 0) == 0) has_db = true;
    if (edits.shard.empty()) continue;
    if (args[i] == "--shard" && i + 1 < args.size() && args[i + 1] == "auto") args[i + 1] = edits.shard;
    if (args[i] == "--shard=auto") args[i] = "--shard=" + edits.shard;
  }
  if (!has_db && !edits.db.empty()) {
    args.emplace_back("--db");
    args.push_back(edits.db);
  }
  std::string line;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) line += ' ';
    line += shell_quote(args[i]);
  }
  return line;
}

}  // namespace ktune::cli
