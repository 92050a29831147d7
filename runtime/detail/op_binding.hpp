#pragma once
/// What the dispatch runtime knows of each operator beyond its KernelSpec: the key of a plan (op,
/// dims, dtype, mode), the problem it stands for, the caller's tensor slots and call-time scalars
/// (derived from the family's DispatchBinding, which its spec declares), and the D8 checks that run
/// without a GPU (the public entry points call them before any launch; the unit tests call them
/// directly).

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernel_templates/kernel_spec.hpp"
#include "ktune/ktune.hpp"
#include "runtime/detail/plan_launcher.hpp"

namespace ktune::kernel_templates {
struct FamilyInfo;
}  // namespace ktune::kernel_templates

namespace ktune::runtime::detail {

enum class OpKind : uint8_t {
  kGemm,
  kRmsNorm,
  kRmsNormRope,
  kSoftmax,
  kSwiglu,
  kDecodeAttention,
  kFp8Gemm,
  kRopeAppend
};

/// Every operator, in a fixed order.
inline constexpr OpKind kAllOps[] = {OpKind::kGemm,    OpKind::kRmsNorm,   OpKind::kRmsNormRope,
                                     OpKind::kSoftmax, OpKind::kSwiglu,    OpKind::kDecodeAttention,
                                     OpKind::kFp8Gemm, OpKind::kRopeAppend};

/// The kernel family (spec_registry.hpp) an operator runs.
constexpr std::string_view kernel_of(OpKind op) {
  switch (op) {
    case OpKind::kGemm:
      return "gemm";
    case OpKind::kRmsNorm:
      return "rmsnorm";
    case OpKind::kRmsNormRope:
      return "rmsnorm_rope";
    case OpKind::kSoftmax:
      return "softmax";
    case OpKind::kSwiglu:
      return "swiglu";
    case OpKind::kDecodeAttention:
      return "decode_attention";
    case OpKind::kFp8Gemm:
      return "fp8_gemm";
    case OpKind::kRopeAppend:
      return "rope_append";
  }
  return "";
}

/// Most dimensions an operator has (decode_attention's batch, heads_q, heads_kv, seq, head_dim).
inline constexpr std::size_t kMaxOpDims = 5;

/// One plan's key: unused dims are 0; `mode` indexes OpBinding::modes. decode_attention adds the
/// call's geometry beyond its shape: `extra` = seq_max (the KV cache capacity), `flags` bit 0 =
/// a context_lens tensor.
struct PlanKey {
  OpKind op = OpKind::kGemm;
  uint8_t mode = 0;
  DType dtype = DType::kF32;
  std::array<int64_t, kMaxOpDims> dims{};
  int64_t extra = 0;
  uint8_t flags = 0;
  bool operator==(const PlanKey&) const = default;
};

/// flags bit of a decode_attention key with per-sequence context lengths.
inline constexpr uint8_t kContextLens = 1;

struct PlanKeyHash {
  std::size_t operator()(const PlanKey& key) const noexcept;
};

/// The runtime's view of one operator: its family's DispatchBinding with each call-time scalar's
/// position found, and the family's dimensions and modes from the kernel catalog.
struct OpBinding {
  OpKind op;
  std::string kernel;              ///< the cache's kernel name, e.g. "rmsnorm"
  std::vector<std::string> dims;   ///< canonical order (the catalog's, from the specs)
  std::vector<std::string> modes;  ///< the key's layout text by mode code: the catalog's layouts
  std::string default_variant;     ///< the template whose default config serves every problem
  std::vector<std::string> slots;  ///< tensor names in the entry point's pointer order
  /// The call's scalars by index; each found by value, or at its name's position in the family's
  /// signature, in every launch.
  std::vector<ScalarBinding> scalars;
  /// Templates whose default config is tried first, in order, where it serves the problem on the
  /// device (a miss's default should not be the slowest template that is correct).
  std::vector<std::string> preferred_defaults;
  /// Tensors whose row strides the entry point takes as call-time scalars (RowStrideBinding::index
  /// into the call's scalars): gemm's a, b and c.
  std::vector<RowStrideBinding> row_strides;
};

/// The binding of `op`: derive_binding of its family, made once.
const OpBinding& binding_of(OpKind op);

/// `op`'s binding from `family`'s DispatchBinding (and the catalog's entry of its name). Throws
/// ktune::Error(kRuntime) naming the family, the scalar and the signature when a scalar found by
/// name is not one parameter of the signature.
OpBinding derive_binding(OpKind op, const kernel_templates::FamilyInfo& family);

/// The problem a key stands for (dims by name, dtype, the mode's layout text).
kernel_templates::Problem make_problem(const PlanKey& key);
/// "rmsnorm rows=7,hidden=4095 bf16 residual": the key in error messages.
std::string describe(const PlanKey& key);

/// Bytes an element of `dtype` takes.
std::size_t element_bytes(DType dtype);

/// Every dimension in [1, 2^31-1] (the kernels index with int); ktune::Error(kBadInput) naming the
/// first that is not, as `<op>: <name>=<value> ...`.
void check_dims(std::string_view op, std::initializer_list<std::pair<const char*, int64_t>> dims);

/// A pointer argument: its name in messages and the alignment its element type needs.
struct PointerArg {
  const char* name;
  const void* ptr;
  std::size_t align;
};
/// Each pointer non-null and aligned to its element; ktune::Error(kBadInput) naming the first that
/// is not.
void check_pointers(std::string_view op, std::initializer_list<PointerArg> pointers);

/// A gemm call's row strides lda, ldb, ldc in elements, 0 resolved to the row's length (k for A, k
/// (kNT) or n (kNN) for B, n for C): the gemm binding's call-time scalars 0, 1, 2. Each must be in
/// [row's length, 2^31-1] (the kernels index with int strides): ktune::Error(kBadInput) naming the
/// first that is not. A stride that a config's fast path cannot take is that config's alignment
/// rule (wgmma_tma's tensor maps need 16-byte rows), checked on the chosen plan
/// (PlanLauncher::misaligned_slot): the default config, which takes any stride, serves such a call.
std::array<double, 3> gemm_row_strides(const GemmArgs& g);

/// The launches of (key, config): the spec's launch_plan, with decode_attention's call geometry
/// (seq_max, context_lens, DecodeAttentionSpec::kDispatchScale) from the key.
kernel_templates::LaunchPlan launch_plan_for(const PlanKey& key, const kernel_templates::KernelSpec& spec,
                                             const kernel_templates::Problem& problem,
                                             const ktune::Config& config);

/// ktune::Error(kBadInput) when the operator cannot run on `arch` (e.g. "sm_80": fp8_gemm needs
/// sm_89 or newer).
void check_arch(const PlanKey& key, std::string_view arch);

/// The template whose default config serves the key's problem on `arch`: the first of the
/// binding's preferred templates that serves it, else its default template, else (a mode that
/// lacks, such as gemm's epilogues in f32-only templates) the first other template that serves it.
/// ktune::Error(kBadInput) with the default template's reason when none does (an unsupported dtype, mode,
/// head_dim or size).
const kernel_templates::KernelSpec& default_spec(const PlanKey& key, std::string_view arch);

/// Whether the operator's templates can serve the problem at all on `arch` (default_spec, and
/// decode_attention's call geometry), as ktune::Error(kBadInput) naming the op. Runs once per key
/// (the first call or prepare), not per launch.
void check_problem(const PlanKey& key, std::string_view arch);

}  // namespace ktune::runtime::detail
