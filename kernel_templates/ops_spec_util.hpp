#pragma once
/// Checks and small helpers shared by the specs of the memory-bound operators (rmsnorm,
/// rmsnorm_rope, softmax, swiglu): problem dimensions, dtype, mode and parameter checks that give
/// the rejection text, and launch arithmetic. The GEMM specs (gemm mma / wgmma, fp8_gemm) take
/// their shared-memory, grid and arch rules from here too.

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates::ops_detail {

/// Kernels index rows and columns with int.
inline constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();
/// CUDA's limit of gridDim.y and .z.
inline constexpr int64_t kMaxGridY = 65535;
/// Threads a block (every NVIDIA GPU since sm_20).
inline constexpr int64_t kMaxThreads = 1024;
/// f32 values a thread may keep in registers (swiglu's gate and up values): 64 leave room for
/// addresses and temporaries within 255 registers.
inline constexpr int64_t kMaxRegisterElems = 64;
/// Bytes of its row a thread may keep in registers in the register modes (rmsnorm REG 1, softmax
/// one pass), packed as T: 64 registers, as kMaxRegisterElems f32 values (128 f16 / bf16 values).
inline constexpr int64_t kMaxRegisterBytes = 256;

/// Shared memory a block may opt in to on sm_90 (227 KiB, static and dynamic together). Smaller
/// GPUs (sm_89: 99 KiB) refuse larger configs at launch, recorded as `exceeds_limits`.
inline constexpr int64_t kMaxSharedBytes = 232448;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }
inline bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
/// A bool as C++ source text (a template argument of a generated kernel).
inline const char* cpp_bool(bool b) { return b ? "true" : "false"; }
/// Elements of `dtype` in 16 bytes.
inline int64_t vec16(DType dtype) { return 16 / static_cast<int64_t>(ktune::size_of(dtype)); }

/// The problem has exactly `names` (any order), each in [1, kMaxDim].
std::optional<std::string> dims_rejection(std::string_view kernel, const Problem& problem,
                                          const std::vector<std::string>& names);
/// f32, f16 or bf16.
std::optional<std::string> dtype_rejection(std::string_view kernel, DType dtype);
/// The config is of `variant` and has exactly `names`, each positive.
std::optional<std::string> params_rejection(std::string_view variant, const Config& config,
                                            const std::vector<std::string>& names);
/// VEC a power of two with VEC * sizeof(dtype) <= 16 bytes.
std::optional<std::string> vec_rejection(int64_t vec, DType dtype);
/// Whether v is one of `values`.
inline bool one_of(int64_t v, std::initializer_list<int64_t> values) {
  for (int64_t x : values) {
    if (v == x) return true;
  }
  return false;
}
/// THREADS (a block's threads) a multiple of 32 in [32, kMaxThreads].
std::optional<std::string> threads_rejection(int64_t threads);
/// `name`=v within [lo, hi].
std::optional<std::string> range_rejection(std::string_view name, int64_t v, int64_t lo, int64_t hi);
/// A config's shared memory within kMaxSharedBytes.
std::optional<std::string> shared_memory_rejection(int64_t bytes);
/// A GEMM's BM x BN tiles of C within gridDim.x.
std::optional<std::string> tile_grid_rejection(const Problem& problem, int64_t bm, int64_t bn);
/// Bulk copies move 16-byte units: a row of `n` (the dimension `dim`) `dtype` elements must be a
/// whole number of them.
std::optional<std::string> copy_unit_rejection(std::string_view dim, int64_t n, DType dtype);
/// `what` needs sm_<min_cc> or newer (`why`: the feature it uses); an arch name that is not sm_NN
/// or compute_NN is refused too.
std::optional<std::string> min_arch_rejection(std::string_view arch, int64_t min_cc, std::string_view what,
                                              std::string_view why);
/// The compute capability of an arch name ("sm_90a" -> 90, "compute_89" -> 89); nullopt when
/// `arch` is not of that form.
std::optional<int64_t> arch_number(std::string_view arch);
/// Throws ktune::Error(kBadInput) with `why` when set.
void throw_if(const std::optional<std::string>& why);
/// The mode `layout` when it is one of `modes` ("" stands for modes[0]); nullopt otherwise.
std::optional<std::string> parse_mode(std::string_view layout, const std::vector<std::string>& modes);

}  // namespace ktune::kernel_templates::ops_detail
