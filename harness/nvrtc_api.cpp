#include "harness/nvrtc_api.hpp"

#include <fmt/format.h>

#include <optional>

#include "harness/dynamic_library.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

/// NVRTC's major version this build was compiled against (the soname libnvrtc.so.<major>).
constexpr const char* kNvrtcMajor = "13";

struct LoadedNvrtc {
  DynamicLibrary library;
  NvrtcApi api;
  std::optional<Error> error;
};

template <class Fn>
void resolve(const DynamicLibrary& lib, Fn& slot, const char* name) {
  slot = reinterpret_cast<Fn>(lib.require(name));
}

void load(LoadedNvrtc& n) {
  n.library = DynamicLibrary::open(toolkit_library_candidates("nvrtc", kNvrtcMajor),
                                   "NVRTC, the CUDA runtime compiler");
  NvrtcApi& a = n.api;
  a.library = n.library.name();
#define KTUNE_DETAIL_NVRTC(name) resolve(n.library, a.name, #name)
  KTUNE_DETAIL_NVRTC(nvrtcVersion);
  KTUNE_DETAIL_NVRTC(nvrtcGetErrorString);
  KTUNE_DETAIL_NVRTC(nvrtcGetNumSupportedArchs);
  KTUNE_DETAIL_NVRTC(nvrtcGetSupportedArchs);
  KTUNE_DETAIL_NVRTC(nvrtcCreateProgram);
  KTUNE_DETAIL_NVRTC(nvrtcDestroyProgram);
  KTUNE_DETAIL_NVRTC(nvrtcAddNameExpression);
  KTUNE_DETAIL_NVRTC(nvrtcCompileProgram);
  KTUNE_DETAIL_NVRTC(nvrtcGetProgramLogSize);
  KTUNE_DETAIL_NVRTC(nvrtcGetProgramLog);
  KTUNE_DETAIL_NVRTC(nvrtcGetCUBINSize);
  KTUNE_DETAIL_NVRTC(nvrtcGetCUBIN);
  KTUNE_DETAIL_NVRTC(nvrtcGetPTXSize);
  KTUNE_DETAIL_NVRTC(nvrtcGetPTX);
  KTUNE_DETAIL_NVRTC(nvrtcGetLoweredName);
#undef KTUNE_DETAIL_NVRTC
  if (a.nvrtcVersion(&a.version_major, &a.version_minor) != NVRTC_SUCCESS) {
    throw Error(ErrorKind::kNoDevice, fmt::format("nvrtcVersion failed in {}", a.library),
                "NVRTC_ERROR_INTERNAL");
  }
}

}  // namespace

const NvrtcApi& nvrtc() {
  // Never destroyed: NVRTC stays mapped until exit (no unload during static destruction).
  static LoadedNvrtc* const instance = [] {
    auto* n = new LoadedNvrtc;
    try {
      load(*n);
    } catch (const Error& e) {
      n->error = e;
    }
    return n;
  }();
  if (instance->error) throw *instance->error;
  return instance->api;
}

}  // namespace ktune::harness
