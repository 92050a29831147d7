#include "harness/driver_api.hpp"

#include <fmt/format.h>

#include <optional>
#include <vector>

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

/// The driver's name for `r` through the plain exported cuGetErrorName (usable before the table is
/// resolved), or "CUresult <n>" when even that fails (as in the toolkit's stub libcuda).
std::string error_name_via_dlsym(const DynamicLibrary& lib, CUresult r) {
  auto get_name = reinterpret_cast<PFN_cuGetErrorName_v6000>(lib.symbol("cuGetErrorName"));
  const char* name = nullptr;
  if (get_name != nullptr && get_name(r, &name) == CUDA_SUCCESS && name != nullptr) return name;
  return fmt::format("CUresult {}", static_cast<int>(r));
}

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
  std::vector<std::string> missing;
  CUresult first_failure = CUDA_SUCCESS;
  int total = 0;
#define KTUNE_DETAIL_RESOLVE(name, version)                                            \
  {                                                                                    \
    ++total;                                                                           \
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;       \
    const CUresult r = get_proc(#name, reinterpret_cast<void**>(&d.api.name), version, \
                                CU_GET_PROC_ADDRESS_DEFAULT, &found);                  \
    if (r != CUDA_SUCCESS || d.api.name == nullptr) {                                  \
      missing.emplace_back(#name "@" #version);                                        \
      if (first_failure == CUDA_SUCCESS) first_failure = r;                            \
    }                                                                                  \
  }
  KTUNE_DRIVER_FUNCS(KTUNE_DETAIL_RESOLVE)
#undef KTUNE_DETAIL_RESOLVE
  if (missing.empty()) return;
  const std::string code = error_name_via_dlsym(d.library, first_failure);
  std::string cause = "driver too old?";
  if (first_failure == CUDA_ERROR_STUB_LIBRARY) {
    cause = fmt::format("it is the CUDA toolkit's stub, not a real driver (cuGetProcAddress_v2 returned {})",
                        code);
  } else if (first_failure != CUDA_SUCCESS) {
    cause = fmt::format("cuGetProcAddress_v2 returned {}", code);
  }
  constexpr std::size_t kListed = 6;  // enough to see which family is missing, short enough to read
  std::string names;
  for (std::size_t i = 0; i < missing.size() && i < kListed; ++i) names += (i > 0 ? ", " : "") + missing[i];
  if (missing.size() > kListed) names += ", ...";
  throw Error(ErrorKind::kNoDevice,
              fmt::format("cannot use the NVIDIA driver {}: {}; {} of {} entry points unresolved: {}",
                          d.api.library, cause, missing.size(), total, names),
              first_failure != CUDA_SUCCESS ? code : error_name_via_dlsym(d.library, CUDA_ERROR_NOT_FOUND));
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
