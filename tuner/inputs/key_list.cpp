#include "tuner/inputs/key_list.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::tuner {

bool is_key_list(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    return is_key_line(line);
  }
  return true;  // comments only: a recorder's file before its first miss
}

std::vector<ListedKey> load_key_list(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("cannot read the key list {}: {}", file.string(), std::strerror(errno)));
  }
  std::vector<ListedKey> out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    try {
      if (auto key = parse_key_line(line)) out.push_back({std::move(*key), number});
    } catch (const Error& e) {
      throw Error(ErrorKind::kBadInput, fmt::format("{}:{}: {}", file.string(), number, e.what()));
    }
  }
  return out;
}

}  // namespace ktune::tuner
