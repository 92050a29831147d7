#include "kernel_templates/cuda_include_dir.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "harness/nvrtc_api.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

void add_env(std::vector<std::filesystem::path>& out, const char* var, const char* suffix) {
  const char* v = std::getenv(var);
  if (v != nullptr && *v != '\0') out.push_back(std::filesystem::path(v) / suffix);
}

bool has_headers(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::exists(dir / "cuda_fp16.h", ec) && std::filesystem::exists(dir / "cuda_bf16.h", ec);
}

}  // namespace

std::vector<std::filesystem::path> cuda_include_candidates() {
  std::vector<std::filesystem::path> out;
  add_env(out, "KTUNE_CUDA_INCLUDE", "");
  add_env(out, "CUDA_HOME", "include");
  add_env(out, "CUDA_PATH", "include");
  try {
    Dl_info info{};
    const auto* fn = reinterpret_cast<const void*>(harness::nvrtc().nvrtcVersion);
    if (fn != nullptr && dladdr(fn, &info) != 0 && info.dli_fname != nullptr) {
      std::error_code ec;
      const auto lib = std::filesystem::canonical(info.dli_fname, ec);
      if (!ec) out.push_back(lib.parent_path().parent_path() / "include");
    }
  } catch (const Error&) {
    // No NVRTC: compiling fails later with the clearer error; the other folders still count.
  }
#ifdef KTUNE_BUILD_CUDA_INCLUDE_DIR
  out.emplace_back(KTUNE_BUILD_CUDA_INCLUDE_DIR);
#endif
  out.emplace_back("/usr/local/cuda/include");
  return out;
}

const std::filesystem::path& cuda_include_dir() {
  static std::once_flag once;
  static std::filesystem::path found;
  std::call_once(once, [] {
    for (const auto& dir : cuda_include_candidates()) {
      if (has_headers(dir)) {
        found = dir;
        return;
      }
    }
  });
  if (found.empty()) {
    std::string tried;
    for (const auto& dir : cuda_include_candidates()) tried += (tried.empty() ? "" : ", ") + dir.string();
    throw Error(ErrorKind::kNoDevice,
                "cannot find the CUDA headers cuda_fp16.h and cuda_bf16.h that the kernel templates need "
                "(tried " +
                    tried + "); set KTUNE_CUDA_INCLUDE to the toolkit's include folder");
  }
  return found;
}

}  // namespace ktune::kernel_templates
