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

bool is_triton_kernel(std::string_view kernel) { return kernel.starts_with("triton:"); }

void refuse_triton_keys(const std::vector<ListedKey>& keys, const std::filesystem::path& file) {
  const ListedKey* first = nullptr;
  size_t count = 0;
  for (const ListedKey& k : keys) {
    if (!is_triton_kernel(k.key.kernel)) continue;
    if (first == nullptr) first = &k;
    ++count;
  }
  if (first == nullptr) return;
  throw Error(
      ErrorKind::kBadInput,
      fmt::format("{}:{}: '{}' is a Triton kernel of a Python module ({} of the file's {} key(s) are): "
                  "`ktune tune` cannot import it. Tune the file with `python3 -m ktune.triton tune {}` "
                  "(from where that module imports; it tunes the file's other keys too, and takes "
                  "--db, --shard I/N and --compile-only as ktune tune does)",
                  file.string(), first->line, first->key.kernel, count, keys.size(), file.string()));
}

}  // namespace ktune::tuner
