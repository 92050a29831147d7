#include "kernel_templates/ops_spec_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "ktune/error.hpp"

namespace ktune::kernel_templates::ops_detail {

std::optional<std::string> dims_rejection(std::string_view kernel, const Problem& problem,
                                          const std::vector<std::string>& names) {
  for (const auto& d : names) {
    const auto it =
        std::find_if(problem.dims.begin(), problem.dims.end(), [&](const auto& p) { return p.first == d; });
    if (it == problem.dims.end()) {
      return fmt::format("{} needs dimension '{}' (shape '{}')", kernel, d, problem.shape_text());
    }
    if (it->second < 1 || it->second > kMaxDim) {
      return fmt::format("{} dimension {}={} is outside [1, {}]", kernel, d, it->second, kMaxDim);
    }
  }
  if (problem.dims.size() != names.size()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return fmt::format("{} takes dimensions {}; got '{}'", kernel, list, problem.shape_text());
  }
  return std::nullopt;
}

std::optional<std::string> dtype_rejection(std::string_view kernel, DType dtype) {
  if (dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16) return std::nullopt;
  return fmt::format("{} supports f32, f16, bf16, not {}", kernel, ktune::to_string(dtype));
}

std::optional<std::string> params_rejection(std::string_view variant, const Config& config,
                                            const std::vector<std::string>& names) {
  if (config.variant != variant)
    return fmt::format("config variant '{}' is not '{}'", config.variant, variant);
  for (const auto& name : names) {
    const auto value = config.find(name);
    if (!value) return fmt::format("{} config lacks parameter {}", variant, name);
    if (*value < 0) return fmt::format("{} must not be negative, not {}", name, *value);
  }
  for (const auto& [name, value] : config.params) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return fmt::format("{} has no parameter {}", variant, name);
    }
  }
  return std::nullopt;
}

std::optional<int64_t> arch_number(std::string_view arch) {
  std::string_view digits = arch;
  if (digits.starts_with("sm_")) digits.remove_prefix(3);
  if (digits.starts_with("compute_")) digits.remove_prefix(8);
  int64_t cc = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cc);
  if (ec != std::errc() || digits.empty()) return std::nullopt;
  return cc;
}

std::optional<std::string> threads_rejection(int64_t threads) {
  if (threads < 32 || threads % 32 != 0 || threads > kMaxThreads) {
    return fmt::format("THREADS={} is not a multiple of 32 in [32, {}]", threads, kMaxThreads);
  }
  return std::nullopt;
}

std::optional<std::string> range_rejection(std::string_view name, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) return fmt::format("{}={} is outside [{}, {}]", name, v, lo, hi);
  return std::nullopt;
}

std::optional<std::string> shared_memory_rejection(int64_t bytes) {
  if (bytes <= kMaxSharedBytes) return std::nullopt;
  return fmt::format("{} bytes of shared memory exceed {} (227 KiB)", bytes, kMaxSharedBytes);
}

std::optional<std::string> tile_grid_rejection(const Problem& problem, int64_t bm, int64_t bn) {
  constexpr int64_t kMaxGridX = std::numeric_limits<int32_t>::max();
  if (ceil_div(problem.dim("m"), bm) * ceil_div(problem.dim("n"), bn) <= kMaxGridX) return std::nullopt;
  return fmt::format("{} needs more than {} blocks", problem.shape_text(), kMaxGridX);
}

std::optional<std::string> copy_unit_rejection(std::string_view dim, int64_t n, DType dtype) {
  constexpr int64_t kCopyUnit = 16;
  const int64_t bytes = n * static_cast<int64_t>(ktune::size_of(dtype));
  if (bytes % kCopyUnit == 0) return std::nullopt;
  return fmt::format("bulk copies move {}-byte units: a row of {}={} {} is {} bytes", kCopyUnit, dim, n,
                     ktune::to_string(dtype), bytes);
}

std::optional<std::string> min_arch_rejection(std::string_view arch, int64_t min_cc, std::string_view what,
                                              std::string_view why) {
  const std::optional<int64_t> cc = arch_number(arch);
  if (!cc) return fmt::format("'{}' is not an arch such as sm_90", arch);
  if (*cc < min_cc) return fmt::format("{} needs sm_{} or newer ({}); {} lacks it", what, min_cc, why, arch);
  return std::nullopt;
}

std::optional<std::string> vec_rejection(int64_t vec, DType dtype) {
  if (!is_pow2(vec) || vec > vec16(dtype)) {
    return fmt::format("VEC={} is not a power of two of at most {} {} elements (16 bytes)", vec, vec16(dtype),
                       ktune::to_string(dtype));
  }
  return std::nullopt;
}

void throw_if(const std::optional<std::string>& why) {
  if (why) throw Error(ErrorKind::kBadInput, *why);
}

std::optional<std::string> parse_mode(std::string_view layout, const std::vector<std::string>& modes) {
  if (layout.empty()) return modes.front();
  for (const auto& m : modes) {
    if (m == layout) return m;
  }
  return std::nullopt;
}

}  // namespace ktune::kernel_templates::ops_detail
