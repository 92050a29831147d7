#include "kernel_templates/embedded_sources.hpp"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <xxhash.h>

#include "kernel_templates/user_kernel/user_kernels.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

bool is_template_file(const std::filesystem::path& p) {
  const auto ext = p.extension().string();
  return ext == ".cu" || ext == ".cuh" || ext == ".toml";
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// The NAMEs of the `#include "NAME"` lines of `text` (spaces allowed around `#` and `include`).
std::vector<std::string> quoted_includes(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    auto skip_spaces = [&] {
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    };
    skip_spaces();
    if (!line.starts_with('#')) continue;
    line.remove_prefix(1);
    skip_spaces();
    if (!line.starts_with("include")) continue;
    line.remove_prefix(7);
    skip_spaces();
    if (!line.starts_with('"')) continue;
    line.remove_prefix(1);
    const size_t close = line.find('"');
    if (close != std::string_view::npos) out.emplace_back(line.substr(0, close));
  }
  return out;
}

}  // namespace

std::span<const EmbeddedFile> embedded_files() {
  return {detail::kEmbeddedFiles, detail::kEmbeddedFileCount};
}

SourceLibrary SourceLibrary::builtin() {
  SourceLibrary lib;
  for (const auto& f : embedded_files()) lib.files_.emplace(std::string(f.name), std::string(f.text));
  return lib;
}

SourceLibrary SourceLibrary::with_folder(const std::filesystem::path& folder) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) {
    throw Error(ErrorKind::kBadInput, "template folder '" + folder.string() + "' is not a directory");
  }
  SourceLibrary lib = builtin();
  lib.folder_ = folder;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (!entry.is_regular_file() || !is_template_file(entry.path())) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    if (!in) throw Error(ErrorKind::kBadInput, "cannot read template file '" + entry.path().string() + "'");
    std::ostringstream text;
    text << in.rdbuf();
    lib.files_[entry.path().filename().string()] = text.str();
  }
  if (ec)
    throw Error(ErrorKind::kBadInput,
                "cannot list template folder '" + folder.string() + "': " + ec.message());
  return lib;
}

SourceLibrary SourceLibrary::from_environment() {
  const char* dir = std::getenv("KTUNE_TEMPLATE_DIR");
  SourceLibrary lib = dir == nullptr || *dir == '\0' ? builtin() : with_folder(dir);
  for (const UserKernelSpec* user : user_kernels()) {
    const auto& d = user->description();
    lib.files_[std::string(user->source_name())] = user->compile_text();
    lib.files_[d.name + ".toml"] = d.toml_text;
  }
  return lib;
}

bool SourceLibrary::contains(std::string_view name) const { return files_.find(name) != files_.end(); }

const std::string& SourceLibrary::text(std::string_view name) const {
  const auto it = files_.find(name);
  if (it == files_.end()) {
    std::string known;
    for (const auto& [n, t] : files_) known += (known.empty() ? "" : ", ") + n;
    throw Error(ErrorKind::kNotFound,
                "no kernel template file '" + std::string(name) + "' (known: " + known + ")");
  }
  return it->second;
}

std::vector<std::string> SourceLibrary::names() const {
  std::vector<std::string> out;
  for (const auto& [n, t] : files_) out.push_back(n);
  return out;
}

std::vector<std::pair<std::string, std::string>> SourceLibrary::headers() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [n, t] : files_) {
    if (ends_with(n, ".cuh")) out.emplace_back(n, t);
  }
  return out;
}

std::vector<std::string> SourceLibrary::included_files(std::span<const std::string> names) const {
  std::set<std::string> seen;
  std::vector<std::string> pending(names.begin(), names.end());
  while (!pending.empty()) {
    const std::string name = std::move(pending.back());
    pending.pop_back();
    const auto it = files_.find(name);
    if (it == files_.end()) continue;  // a toolkit header, found through -I at compile time
    for (std::string& inc : quoted_includes(it->second)) {
      if (files_.find(inc) != files_.end() && seen.insert(inc).second) pending.push_back(std::move(inc));
    }
  }
  return {seen.begin(), seen.end()};
}

std::string SourceLibrary::hash(std::span<const std::string> names) const {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  auto add = [&](const std::string& name, const std::string& text) {
    // Lengths first, so ("ab","c") and ("a","bc") hash differently.
    const uint64_t sizes[2] = {name.size(), text.size()};
    XXH3_64bits_update(state, sizes, sizeof sizes);
    XXH3_64bits_update(state, name.data(), name.size());
    XXH3_64bits_update(state, text.data(), text.size());
  };
  for (const auto& n : names) add(n, text(n));
  for (const auto& n : included_files(names)) add(n, files_.find(n)->second);
  const XXH64_hash_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace ktune::kernel_templates
