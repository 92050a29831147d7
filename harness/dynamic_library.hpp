#pragma once
/// RAII handle on a shared library opened at run time (D2: no CUDA library is linked).
/// `open` tries a list of names/paths in order and, when none opens, throws
/// ktune::Error(kNoDevice) that names the library and says why dlopen refused it.

#include <string>
#include <string_view>
#include <vector>

#include "ktune/error.hpp"

namespace ktune::harness {

class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  /// Opens the first of `candidates` that dlopen accepts (RTLD_NOW | RTLD_GLOBAL).
  /// `what` says what the library is for a person, e.g. "the NVIDIA driver".
  /// Throws Error(kNoDevice, "cannot open <first candidate> (<what>): <dlerror>; also tried: ...").
  static DynamicLibrary open(const std::vector<std::string>& candidates, std::string_view what);

  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  ~DynamicLibrary();

  /// The symbol's address, or nullptr when the library does not export it.
  void* symbol(const char* name) const noexcept;
  /// The symbol's address; throws Error(kNoDevice) naming the symbol and the library when missing.
  void* require(const char* name) const;

  /// The candidate that opened (name or path as given to dlopen).
  const std::string& name() const noexcept { return name_; }
  bool is_open() const noexcept { return handle_ != nullptr; }

 private:
  DynamicLibrary(void* handle, std::string name) : handle_(handle), name_(std::move(name)) {}
  void* handle_ = nullptr;
  std::string name_;
};

/// Where to look for a CUDA toolkit library `lib<base>.so`: the versioned soname, the plain name, and
/// both under $CUDA_HOME/lib64 and /usr/local/cuda/lib64. `major` is the toolkit major version ("13").
/// Example: toolkit_library_candidates("nvrtc", "13") -> {"libnvrtc.so.13", "libnvrtc.so",
/// "$CUDA_HOME/lib64/libnvrtc.so.13", ..., "/usr/local/cuda/lib64/libnvrtc.so"}.
std::vector<std::string> toolkit_library_candidates(std::string_view base, std::string_view major);

}  // namespace ktune::harness
