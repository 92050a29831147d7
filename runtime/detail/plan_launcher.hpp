#pragma once
/// The dispatch runtime's launch path for any kernel: a KernelSpec's LaunchPlan for one problem,
/// resolved once into CUfunctions with their geometry and an argument template, so a launch only
/// writes the caller's pointers and scalars into a stack array and calls cuLaunchKernel (no
/// allocation, no lookup, no synchronisation: safe inside CUDA graph capture).
///
/// Binding (bind_plan, no CUDA) maps each tensor the plan names to a caller slot by name (the
/// operator's own order: gemm a, b, c; rmsnorm x, residual, w, y, residual_out; ...), each
/// TensorRole::kWorkspace tensor to an offset in one workspace block, and the scalar arguments the
/// caller chooses (eps, scale, max_pos) to call-time values. The spec writes its own constant for
/// those (RmsNormSpec::kEps, ...); a ScalarBinding names the argument by position (op_binding.cpp
/// finds it by the name the family's DispatchBinding gives) and the constant it must hold there, so
/// a plan whose arguments moved fails the bind instead of launching with the wrong value. Row
/// strides (gemm's lda, ldb, ldc) are caller scalars too, bound by tensor: every kRowStride
/// argument of the tensor and its tensor maps take the caller's stride.

#include <cuda.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "harness/tensor_map.hpp"
#include "kernel_templates/dispatch_binding.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::runtime::detail {

/// A kernel argument the caller supplies at each call (scalars[`index`] at launch time). By
/// position: argument `arg` of launch `launch` (of every launch when kEveryLaunch) holds
/// `spec_value` in the spec's plan. By value (`arg` == kByValue): every argument of the kind that
/// holds `spec_value`, in any launch (for a constant the spec passes to several launches at
/// different positions; the specs' f32 constants, such as eps 1e-6 and softmax's 0.75, are
/// chosen so that nothing else matches). Either way at least one argument must match.
struct ScalarBinding {
  static constexpr std::size_t kEveryLaunch = static_cast<std::size_t>(-1);
  static constexpr std::size_t kByValue = static_cast<std::size_t>(-1);
  /// spec_value of a positional binding whose argument may hold any value of its kind (a geometry
  /// the tuned plan derives from the shape); the kind is still checked.
  static constexpr double kAnyValue = kernel_templates::CallScalar::kAnyValue;
  using Kind = kernel_templates::CallScalar::Kind;
  std::size_t launch = kEveryLaunch;
  std::size_t arg = kByValue;
  Kind kind = Kind::kF32;
  double spec_value = 0;
  std::size_t index = 0;
};

/// A tensor whose row stride (elements) the caller gives at each call, as scalars[`index`]: every
/// kRowStride argument of the tensor takes it, and its tensor maps are encoded with it. The tensor
/// must be a caller's slot, and every launch that reads or writes it must take its stride (a
/// kRowStride argument, or the stride inside its tensor map): a plan that would address a strided
/// view as contiguous fails the bind (kRuntime).
struct RowStrideBinding {
  std::string tensor;
  std::size_t index = 0;
};

struct LaunchArg {
  /// kTensorMap: the TMA tensor map of caller slot `integer` (encoded at each launch from the
  /// caller's pointer and, when `stride_scalar` >= 0, row stride: a host-side descriptor, no GPU
  /// work).
  enum class Kind { kSlot, kWorkspace, kNull, kI32, kI64, kF32, kScalarF32, kScalarI32, kTensorMap };
  Kind kind = Kind::kNull;
  int64_t integer = 0;         ///< slot index, workspace offset, scalar index, or the kI32/kI64 value
  float real = 0;              ///< kF32 value
  harness::TensorMap2d map{};  ///< kTensorMap: the tensor's shape and box
  int64_t stride_scalar = -1;  ///< kTensorMap: the caller scalar holding its row stride (-1: contiguous)
};

struct LaunchStep {
  std::string name_expression;
  CUfunction function = nullptr;  ///< set by resolve_functions
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned smem_bytes = 0;
  std::vector<LaunchArg> args;
};

/// Most arguments a kernel may take (the largest today, rmsnorm_rope, has 13).
inline constexpr std::size_t kMaxLaunchArgs = 24;
/// Most tensor-map arguments a kernel may take (wgmma_tma: 2).
inline constexpr std::size_t kMaxTensorMaps = 4;
/// Alignment of each workspace tensor within the block (cuMemAlloc's own alignment).
inline constexpr std::size_t kWorkspaceAlign = 256;

/// Where a slot's row stride comes from: the caller scalar (-1: the slot has none) and the size of
/// its elements, so that a required alignment can be checked on the stride in bytes too.
struct SlotStride {
  int64_t scalar = -1;
  int64_t element_bytes = 0;
};

struct PlanLauncher {
  std::vector<LaunchStep> steps;
  std::size_t workspace_bytes = 0;      ///< one block holding every workspace tensor (0: none)
  std::vector<int64_t> slot_align;      ///< per slot: alignment a launch requires (0: none)
  std::vector<SlotStride> slot_stride;  ///< per slot: its caller-given row stride, if any
  std::vector<bool> slot_used;          ///< per slot: whether some launch reads it
  std::size_t scalar_count = 0;         ///< caller scalars the launches take (their values by index)

  /// The first slot whose pointer, or whose row stride in bytes, misses the alignment a launch
  /// requires (`scalars`: the call's, holding the row strides), or -1.
  int misaligned_slot(std::span<const void* const> slots, std::span<const double> scalars) const;
  /// The first slot whose row stride in bytes misses the alignment a launch requires, or -1.
  int misaligned_stride(std::span<const double> scalars) const;
};

/// Binds `plan` to `slots` (tensor names in the caller's order), `scalars` and `row_strides`.
/// Throws ktune::Error(kBadInput) for a plan tensor that is neither a slot nor a workspace, an
/// alignment rule that is required for a tensor without a slot, or too many arguments; kRuntime
/// when a scalar binding does not find the spec's value where it says, or a launch addresses a
/// tensor of `row_strides` without its stride.
PlanLauncher bind_plan(const kernel_templates::LaunchPlan& plan,
                       const std::vector<kernel_templates::AlignmentRule>& alignment,
                       std::span<const std::string> slots, std::span<const ScalarBinding> scalars,
                       std::span<const RowStrideBinding> row_strides = {});

/// Looks up every step's function in `module` (loaded from `compiled`) and opts in to more than
/// 48 KiB of dynamic shared memory where a step needs it. Needs the module's context current.
void resolve_functions(PlanLauncher& launcher, const harness::CompileResult& compiled,
                       const harness::Module& module);

/// Launches every step on `stream` (hot path): slot i gets `slots[i]`, workspace tensors their
/// offset in `workspace`, scalar j `scalars[j]` (row strides included). Throws ktune::Error on a
/// failed launch.
void launch_plan(const PlanLauncher& l, std::span<const CUdeviceptr> slots, CUdeviceptr workspace,
                 std::span<const double> scalars, CUstream stream);

}  // namespace ktune::runtime::detail
