#include "harness/driver_api.hpp"

#include <fmt/format.h>

#include <optional>

#include "harness/cuda_check.hpp"
#include "harness/dynamic_library.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

/// The loaded driver. Created once and never destroyed: libcuda stays mapped until the process
/// exits, so no static destructor can run after it is unloaded.
struct LoadedDriver {
  DynamicLibrary library;
  DriverApi api;
  std::optional<Error> table_error;  ///< libcuda missing or an entry point unresolved
  std::optional<Error> init_error;   ///< cuInit failed
};

void resolve_table(LoadedDriver& d) {
  d.library = DynamicLibrary::open({"libcuda.so.1", "libcuda.so"}, "the NVIDIA driver");
  d.api.library = d.library.name();
  auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(d.library.symbol("cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    throw Error(ErrorKind::kNoDevice,
                fmt::format("{} has no cuGetProcAddress_v2: the NVIDIA driver is older than CUDA 12.0",
                            d.api.library),
                "DLSYM_FAILED");
  }
  std::string missing;
#define KTUNE_DETAIL_RESOLVE(name, version)                                            \
  {                                                                                    \
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;       \
    const CUresult r = get_proc(#name, reinterpret_cast<void**>(&d.api.name), version, \
                                CU_GET_PROC_ADDRESS_DEFAULT, &found);                  \
    if (r != CUDA_SUCCESS || d.api.name == nullptr)                                    \
      missing += (missing.empty() ? "" : ", ") + std::string(#name "@" #version);      \
  }
  KTUNE_DRIVER_FUNCS(KTUNE_DETAIL_RESOLVE)
#undef KTUNE_DETAIL_RESOLVE
  if (!missing.empty()) {
    throw Error(ErrorKind::kNoDevice,
                fmt::format("the NVIDIA driver {} lacks entry points ktune needs (driver too old?): {}",
                            d.api.library, missing),
                "CUDA_ERROR_NOT_FOUND");
  }
}

void initialise(LoadedDriver& d) {
  const CUresult r = d.api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const std::string name = cu_error_name(r);
    d.init_error.emplace(ErrorKind::kNoDevice,
                         fmt::format("cuInit(0) failed: {} ({}): {} (driver library {})", name,
                                     static_cast<int>(r), cu_error_string(r), d.api.library),
                         name);
    return;
  }
  if (d.api.cuDriverGetVersion(&d.api.driver_version) != CUDA_SUCCESS) d.api.driver_version = 0;
}

LoadedDriver& loaded() {
  static LoadedDriver* const instance = [] {
    auto* d = new LoadedDriver;
    try {
      resolve_table(*d);
    } catch (const Error& e) {
      d->table_error = e;
      d->api = DriverApi{};
    }
    return d;
  }();
  return *instance;
}

}  // namespace

const DriverApi* driver_table_or_null() noexcept {
  const LoadedDriver& d = loaded();
  return d.table_error ? nullptr : &d.api;
}

const DriverApi& driver() {
  LoadedDriver& d = loaded();
  if (d.table_error) throw *d.table_error;
  static const bool initialised = [&d] {
    initialise(d);
    return true;
  }();
  (void)initialised;
  if (d.init_error) throw *d.init_error;
  return d.api;
}

}  // namespace ktune::harness
