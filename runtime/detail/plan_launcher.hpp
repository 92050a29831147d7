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
/// those (RmsNormSpec::kEps, ...); a ScalarBinding names the argument by position and the constant
/// it must hold there, so a spec whose arguments move fails the bind instead of launching with the
/// wrong value.

#include <cuda.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "harness/tensor_map.hpp"
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
  enum class Kind { kF32, kI32 };
  std::size_t launch = kEveryLaunch;
  std::size_t arg = kByValue;
  Kind kind = Kind::kF32;
  double spec_value = 0;
  std::size_t index = 0;
};

struct LaunchArg {
  /// kTensorMap: the TMA tensor map of caller slot `integer` (encoded at each launch from the
  /// caller's pointer: a host-side descriptor, no GPU work).
  enum class Kind { kSlot, kWorkspace, kNull, kI32, kI64, kF32, kScalarF32, kScalarI32, kTensorMap };
  Kind kind = Kind::kNull;
  int64_t integer = 0;         ///< slot index, workspace offset, scalar index, or the kI32/kI64 value
  float real = 0;              ///< kF32 value
  harness::TensorMap2d map{};  ///< kTensorMap: the tensor's shape and box
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

struct PlanLauncher {
  std::vector<LaunchStep> steps;
  std::size_t workspace_bytes = 0;  ///< one block holding every workspace tensor (0: none)
  std::vector<int64_t> slot_align;  ///< per slot: alignment a launch requires (0: none)
  std::vector<bool> slot_used;      ///< per slot: whether some launch reads it
  std::size_t scalar_count = 0;     ///< caller scalars the launches take (their values by index)
};

/// Binds `plan` to `slots` (tensor names in the caller's order) and `scalars`. Throws
/// ktune::Error(kBadInput) for a plan tensor that is neither a slot nor a workspace, an alignment
/// rule that is required for a tensor without a slot, or too many arguments; kRuntime when a
/// scalar binding does not find the spec's value where it says.
PlanLauncher bind_plan(const kernel_templates::LaunchPlan& plan,
                       const std::vector<kernel_templates::AlignmentRule>& alignment,
                       std::span<const std::string> slots, std::span<const ScalarBinding> scalars);

/// Looks up every step's function in `module` (loaded from `compiled`) and opts in to more than
/// 48 KiB of dynamic shared memory where a step needs it. Needs the module's context current.
void resolve_functions(PlanLauncher& launcher, const harness::CompileResult& compiled,
                       const harness::Module& module);

/// Launches every step on `stream` (hot path): slot i gets `slots[i]`, workspace tensors their
/// offset in `workspace`, scalar j `scalars[j]`. Throws ktune::Error on a failed launch.
void launch_plan(const PlanLauncher& l, std::span<const CUdeviceptr> slots, CUdeviceptr workspace,
                 std::span<const double> scalars, CUstream stream);

}  // namespace ktune::runtime::detail
