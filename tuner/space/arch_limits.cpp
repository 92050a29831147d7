#include "tuner/space/arch_limits.hpp"

#include <regex>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::tuner {
namespace {

struct Row {
  int cc;
  const char* device;
  int64_t smem_optin;  ///< bytes; CUDA C++ Programming Guide, "Technical Specifications per CC"
  int64_t sm_count;
};

constexpr Row kRows[] = {
    {70, "V100", 98304, 80},
    {75, "T4", 65536, 40},
    {80, "A100", 166912, 108},
    {86, "A10/RTX 30xx", 101376, 72},
    {89, "L4/L40/RTX 40xx", 101376, 58},
    {90, "H100/H200", 232448, 132},
    {100, "B200", 232448, 148},
    {120, "RTX 50xx", 101376, 84},
};

}  // namespace

ArchLimits arch_limits(std::string_view arch) {
  static const std::regex kArch(R"(sm_(\d{1,4})[af]?)");  // 4 digits at most: std::stoi must not overflow
  std::cmatch m;
  const std::string text(arch);
  if (!std::regex_match(text.c_str(), m, kArch)) {
    throw Error(ErrorKind::kBadInput, fmt::format("bad architecture '{}': expected sm_XX, e.g. sm_90", arch));
  }
  const int cc = std::stoi(m[1].str());
  ArchLimits out;
  for (const Row& r : kRows) {
    if (r.cc != cc) continue;
    out.limits.max_smem_per_block = r.smem_optin;
    out.limits.sm_count = r.sm_count;
    out.device = r.device;
    out.known = true;
    return out;
  }
  out.device = "H100/H200 (default: " + text + " is not in ktune's table)";
  return out;
}

cache::GpuInfo compile_only_gpu(std::string_view arch, const ArchLimits& limits) {
  ArchLimits checked = arch_limits(arch);  // validates
  (void)checked;
  const std::string text(arch);
  const int cc = std::stoi(text.substr(3));
  cache::GpuInfo g;
  g.name = "compile-only " + text;
  g.cc_major = cc / 10;
  g.cc_minor = cc % 10;
  g.sm_count = static_cast<int>(limits.limits.sm_count);
  g.memory_bytes = 0;
  return g;
}

}  // namespace ktune::tuner
