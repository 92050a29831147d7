#pragma once
/// One error family for every CUDA API: a failing call becomes a ktune::Error that
/// carries the API's own error name (from cuGetErrorName / nvrtcGetErrorString / cuptiGetResultString,
/// never typed by hand), the call's text and "file:line". NVRTC errors carry the compile log in detail().
///
///   KTUNE_CU_CHECK(driver().cuMemAlloc(&ptr, bytes));
///   KTUNE_NVRTC_CHECK(nvrtc().nvrtcCompileProgram(prog, n, opts), log);
///   KTUNE_CUPTI_CHECK(api.cuptiActivityFlushAll(0));   // needs harness/cupti_api.hpp
///
/// Driver codes that mean "no usable GPU" (CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NOT_INITIALIZED,
/// CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, ...) map to
/// ErrorKind::kNoDevice; everything else to kRuntime.

#include <cuda.h>
#include <nvrtc.h>

#include <string>
#include <string_view>

#include "ktune/error.hpp"

namespace ktune::harness {

/// The generic thrower behind every check macro. Message: "<call> failed: <api_code> (<code>):
/// <description>".
[[noreturn]] void throw_api_error(ErrorKind kind, std::string_view api_code, long long code,
                                  std::string_view description, const char* call, const char* where,
                                  std::string detail = {});

/// The driver's name for `r` ("CUDA_ERROR_OUT_OF_MEMORY"), or "CUresult <n>" when the driver is absent.
std::string cu_error_name(CUresult r);
/// The driver's description of `r`, or "" when the driver is absent.
std::string cu_error_string(CUresult r);
/// The ErrorKind a driver code maps to (kNoDevice for the "no usable GPU" family, else kRuntime).
ErrorKind cu_error_kind(CUresult r);

[[noreturn]] void throw_cu_error(CUresult r, const char* call, const char* where);
/// `log` (a compile log, may be empty) goes to Error::detail().
[[noreturn]] void throw_nvrtc_error(nvrtcResult r, const char* call, const char* where, std::string log);

}  // namespace ktune::harness

#define KTUNE_DETAIL_STR2(x) #x
#define KTUNE_DETAIL_STR(x) KTUNE_DETAIL_STR2(x)
/// "file:line" of the expansion site.
#define KTUNE_WHERE __FILE__ ":" KTUNE_DETAIL_STR(__LINE__)

/// The one generic check: evaluates `call` once; unless it equals `success`, calls
/// `raise(result, "<call text>", "file:line", extra...)`, which must not return.
#define KTUNE_API_CHECK(call, success, raise, ...)                     \
  do {                                                                 \
    const auto ktune_rc_ = (call);                                     \
    if (ktune_rc_ != (success)) {                                      \
      raise(ktune_rc_, #call, KTUNE_WHERE __VA_OPT__(, ) __VA_ARGS__); \
    }                                                                  \
  } while (0)

#define KTUNE_CU_CHECK(call) KTUNE_API_CHECK(call, CUDA_SUCCESS, ::ktune::harness::throw_cu_error)
/// `log`: a std::string with the compile log ("" when none), stored in Error::detail().
#define KTUNE_NVRTC_CHECK(call, log) \
  KTUNE_API_CHECK(call, NVRTC_SUCCESS, ::ktune::harness::throw_nvrtc_error, log)
/// Needs harness/cupti_api.hpp (declares throw_cupti_error) at the expansion site.
#define KTUNE_CUPTI_CHECK(call) KTUNE_API_CHECK(call, CUPTI_SUCCESS, ::ktune::harness::throw_cupti_error)
