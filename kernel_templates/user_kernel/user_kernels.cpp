#include "kernel_templates/user_kernel/user_kernels.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<UserKernelSpec>> specs;
  // Replaced specs stay alive: callers may still hold them.
  std::vector<std::unique_ptr<UserKernelSpec>> retired;
  std::atomic<uint64_t> generation{0};
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

const UserKernelSpec& register_user_kernel(UserKernelDescription description) {
  for (const FamilyInfo& f : template_families()) {
    if (f.name == description.name || description.name == "copy") {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("{}: a user kernel may not be named '{}': a built-in kernel has that name",
                              description.toml_path.string(), description.name));
    }
  }
  auto spec = std::make_unique<UserKernelSpec>(std::move(description));
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  const UserKernelSpec* out = spec.get();
  auto it = std::find_if(r.specs.begin(), r.specs.end(),
                         [&](const auto& s) { return s->kernel() == out->kernel(); });
  if (it != r.specs.end()) {
    r.retired.push_back(std::move(*it));
    *it = std::move(spec);
  } else {
    r.specs.push_back(std::move(spec));
  }
  ++r.generation;
  return *out;
}

std::vector<std::string> load_kernel_folder(const std::filesystem::path& folder) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) {
    throw Error(ErrorKind::kBadInput, fmt::format("--kernel-dir '{}' is not a directory", folder.string()));
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const auto& p = entry.path();
    if (!entry.is_regular_file() || p.extension() != ".toml") continue;
    const std::string stem = p.stem().string();
    if (!std::filesystem::exists(folder / (stem + ".cu")) &&
        !std::filesystem::is_directory(cubin_folder(folder, stem)))
      continue;
    names.push_back(p.stem().string());
  }
  if (ec)
    throw Error(ErrorKind::kBadInput, fmt::format("cannot list '{}': {}", folder.string(), ec.message()));
  if (names.empty()) {
    throw Error(
        ErrorKind::kBadInput,
        fmt::format(
            "kernel folder '{}' holds no kernel: a kernel is NAME.toml beside NAME.cu or beside a folder "
            "NAME.cubins of prebuilt cubins (docs/byo.md)",
            folder.string()));
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) register_user_kernel(read_user_kernel(folder, name));
  return names;
}

const UserKernelSpec* find_user_kernel(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  for (const auto& s : r.specs) {
    if (s->kernel() == name) return s.get();
  }
  return nullptr;
}

std::vector<const UserKernelSpec*> user_kernels() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<const UserKernelSpec*> out;
  for (const auto& s : r.specs) out.push_back(s.get());
  return out;
}

uint64_t user_kernel_generation() { return registry().generation.load(); }

void clear_user_kernels() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  for (auto& s : r.specs) r.retired.push_back(std::move(s));
  r.specs.clear();
  ++r.generation;
}

void load_kernel_folders_from_environment() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* dirs = std::getenv("KTUNE_KERNEL_DIR");
    if (dirs == nullptr || *dirs == '\0') return;
    std::stringstream list(dirs);
    std::string dir;
    while (std::getline(list, dir, ':')) {
      if (!dir.empty()) load_kernel_folder(dir);
    }
  });
}

}  // namespace ktune::kernel_templates
