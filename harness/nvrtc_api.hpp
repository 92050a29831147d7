#pragma once
/// NVRTC, opened at run time from libnvrtc.so.13 (D2). Members are named like the NVRTC functions:
/// `nvrtc().nvrtcCompileProgram(...)`. Wrap calls in KTUNE_NVRTC_CHECK (harness/cuda_check.hpp).

#include <nvrtc.h>

#include <string>

#include "ktune/error.hpp"

namespace ktune::harness {

struct NvrtcApi {
  decltype(&::nvrtcVersion) nvrtcVersion = nullptr;
  decltype(&::nvrtcGetErrorString) nvrtcGetErrorString = nullptr;
  decltype(&::nvrtcGetNumSupportedArchs) nvrtcGetNumSupportedArchs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) nvrtcGetSupportedArchs = nullptr;
  decltype(&::nvrtcCreateProgram) nvrtcCreateProgram = nullptr;
  decltype(&::nvrtcDestroyProgram) nvrtcDestroyProgram = nullptr;
  decltype(&::nvrtcAddNameExpression) nvrtcAddNameExpression = nullptr;
  decltype(&::nvrtcCompileProgram) nvrtcCompileProgram = nullptr;
  decltype(&::nvrtcGetProgramLogSize) nvrtcGetProgramLogSize = nullptr;
  decltype(&::nvrtcGetProgramLog) nvrtcGetProgramLog = nullptr;
  decltype(&::nvrtcGetCUBINSize) nvrtcGetCUBINSize = nullptr;
  decltype(&::nvrtcGetCUBIN) nvrtcGetCUBIN = nullptr;
  decltype(&::nvrtcGetPTXSize) nvrtcGetPTXSize = nullptr;
  decltype(&::nvrtcGetPTX) nvrtcGetPTX = nullptr;
  decltype(&::nvrtcGetLoweredName) nvrtcGetLoweredName = nullptr;

  std::string library;  ///< the libnvrtc that was opened
  int version_major = 0;
  int version_minor = 0;
};

/// NVRTC, loaded once (thread-safe). Throws Error(kNoDevice, "cannot open libnvrtc.so.13 (NVRTC, the
/// CUDA runtime compiler): ...") when the toolkit library is missing; the failure is rethrown later.
const NvrtcApi& nvrtc();

}  // namespace ktune::harness
