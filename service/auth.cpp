#include "service/auth.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::service {

std::string read_token_file(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(ErrorKind::kBadInput, fmt::format("--token-file {}: no such file", path.string()));
  if (!S_ISREG(st.st_mode))
    throw Error(ErrorKind::kBadInput, fmt::format("--token-file {}: not a regular file", path.string()));
  if ((st.st_mode & 077) != 0) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("--token-file {} may be read or written by others (mode {:03o}); make it "
                            "private with: chmod 600 {}",
                            path.string(), st.st_mode & 0777, path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kBadInput, fmt::format("--token-file {}: cannot be read", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  const auto first = token.find_first_not_of(" \t\r\n");
  const auto last = token.find_last_not_of(" \t\r\n");
  token = first == std::string::npos ? std::string() : token.substr(first, last - first + 1);
  if (token.size() < kMinTokenBytes) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("--token-file {}: the token has {} byte(s), fewer than {}; make one with: "
                            "openssl rand -hex 32 > {}",
                            path.string(), token.size(), kMinTokenBytes, path.string()));
  }
  for (const char c : token) {
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f) {
      throw Error(
          ErrorKind::kBadInput,
          fmt::format("--token-file {}: the token holds a space or control character", path.string()));
    }
  }
  return token;
}

bool bearer_matches(std::string_view authorization, std::string_view token) {
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.size() < kScheme.size() || authorization.substr(0, kScheme.size()) != kScheme)
    return false;
  const std::string_view given = authorization.substr(kScheme.size());
  // Compare every byte of the expected token whatever the given one holds: no early exit.
  unsigned diff = given.size() == token.size() ? 0U : 1U;
  for (size_t i = 0; i < token.size(); ++i) {
    const char g = i < given.size() ? given[i] : '\0';
    diff |= static_cast<unsigned>(static_cast<unsigned char>(g) ^ static_cast<unsigned char>(token[i]));
  }
  return diff == 0;
}

}  // namespace ktune::service
