#pragma once
/// Per-kernel resources from the ptxas verbose report (-Xptxas=-v) that NVRTC appends to its log.

#include <map>
#include <string>

namespace ktune::harness {

/// One kernel's resources from the ptxas verbose report.
struct KernelResources {
  int registers = 0;
  int shared_bytes = 0;  ///< static shared memory
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int local_bytes = 0;     ///< stack frame (lmem)
  int constant_bytes = 0;  ///< cmem[0], the parameter bank
  bool operator==(const KernelResources&) const = default;
};

/// Parses the "ptxas info" lines of an NVRTC log compiled with -Xptxas=-v into per-kernel resources,
/// keyed by the mangled name ptxas prints (which is the lowered name).
std::map<std::string, KernelResources> parse_ptxas_report(const std::string& log);

/// Resources as JSON text and back (for storing in a compile cache).
std::string resources_to_json(const std::map<std::string, KernelResources>& resources);
std::map<std::string, KernelResources> resources_from_json(const std::string& json);

}  // namespace ktune::harness
