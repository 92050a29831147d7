#include "harness/dynamic_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <utility>

#include "ktune/error.hpp"

namespace ktune::harness {

DynamicLibrary DynamicLibrary::open(const std::vector<std::string>& candidates, std::string_view what) {
  if (candidates.empty()) throw Error(ErrorKind::kRuntime, fmt::format("no library name given for {}", what));
  std::string first_error;
  for (const std::string& name : candidates) {
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle != nullptr) return DynamicLibrary(handle, name);
    if (first_error.empty()) {
      const char* err = dlerror();
      first_error = err != nullptr ? err : "unknown dlopen error";
    }
  }
  std::string others;
  for (std::size_t i = 1; i < candidates.size(); ++i) others += (i > 1 ? ", " : "") + candidates[i];
  std::string message = fmt::format("cannot open {} ({}): {}", candidates.front(), what, first_error);
  if (!others.empty()) message += "; also tried: " + others;
  throw Error(ErrorKind::kNoDevice, message, "DLOPEN_FAILED");
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), name_(std::move(other.name_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    name_ = std::move(other.name_);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

void* DynamicLibrary::symbol(const char* name) const noexcept {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

void* DynamicLibrary::require(const char* name) const {
  void* address = symbol(name);
  if (address == nullptr) {
    throw Error(
        ErrorKind::kNoDevice,
        fmt::format("{} has no symbol {} (library too old?)", name_.empty() ? "library" : name_, name),
        "DLSYM_FAILED");
  }
  return address;
}

std::vector<std::string> toolkit_library_candidates(std::string_view base, std::string_view major) {
  const std::string versioned = fmt::format("lib{}.so.{}", base, major);
  const std::string plain = fmt::format("lib{}.so", base);
  std::vector<std::string> out = {versioned, plain};
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') {
    dirs.push_back(std::string(home) + "/lib64");
  }
  dirs.emplace_back("/usr/local/cuda/lib64");
  for (const std::string& dir : dirs) {
    out.push_back(dir + "/" + versioned);
    out.push_back(dir + "/" + plain);
  }
  return out;
}

}  // namespace ktune::harness
