#include "harness/cuda_check.hpp"

#include <fmt/format.h>

#include "harness/driver_api.hpp"
#include "harness/nvrtc_api.hpp"

namespace ktune::harness {

void throw_api_error(ErrorKind kind, std::string_view api_code, long long code, std::string_view description,
                     const char* call, const char* where, std::string detail) {
  std::string message = fmt::format("{} failed: {} ({})", call, api_code, code);
  if (!description.empty()) message += fmt::format(": {}", description);
  throw Error(kind, message, std::string(api_code), where, std::move(detail));
}

std::string cu_error_name(CUresult r) {
  const DriverApi* api = driver_table_or_null();
  const char* name = nullptr;
  if (api != nullptr && api->cuGetErrorName(r, &name) == CUDA_SUCCESS && name != nullptr) return name;
  return fmt::format("CUresult {}", static_cast<int>(r));
}

std::string cu_error_string(CUresult r) {
  const DriverApi* api = driver_table_or_null();
  const char* text = nullptr;
  if (api != nullptr && api->cuGetErrorString(r, &text) == CUDA_SUCCESS && text != nullptr) return text;
  return {};
}

ErrorKind cu_error_kind(CUresult r) {
  switch (r) {
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_SYSTEM_NOT_READY:
      return ErrorKind::kNoDevice;
    default:
      return ErrorKind::kRuntime;
  }
}

void throw_cu_error(CUresult r, const char* call, const char* where) {
  throw_api_error(cu_error_kind(r), cu_error_name(r), static_cast<long long>(r), cu_error_string(r), call,
                  where);
}

void throw_nvrtc_error(nvrtcResult r, const char* call, const char* where, std::string log) {
  std::string name = fmt::format("nvrtcResult {}", static_cast<int>(r));
  try {
    if (const char* s = nvrtc().nvrtcGetErrorString(r); s != nullptr) name = s;
  } catch (const Error&) {
    // NVRTC gave us `r`, so it is loaded; keep the numeric name if that ever fails.
  }
  throw_api_error(ErrorKind::kRuntime, name, static_cast<long long>(r), {}, call, where, std::move(log));
}

}  // namespace ktune::harness
