#pragma once
/// The dispatch runtime's launch path for one (shape, dtype, layout): every kernel of the config's
/// LaunchPlan resolved once to a CUfunction with its geometry and an argument template, so a launch
/// only writes the caller's pointers into a stack array and calls cuLaunchKernel (no allocation,
/// no lookup, no synchronisation: safe inside CUDA graph capture).

#include <cuda.h>

#include <cstdint>
#include <vector>

#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::tuner::detail {

struct LaunchArg {
  enum class Kind { kA, kB, kC, kWorkspace, kNull, kI32, kI64, kF32 };
  Kind kind = Kind::kNull;
  int64_t integer = 0;
  float real = 0;
};

struct LaunchStep {
  CUfunction function = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned smem_bytes = 0;
  std::vector<LaunchArg> args;
};

/// Most arguments a gemm kernel takes (the largest, the tensor-core GEMM's finish pass, has 8).
inline constexpr std::size_t kMaxLaunchArgs = 16;

struct GemmLauncher {
  std::vector<LaunchStep> steps;
  std::size_t workspace_bytes = 0;
  int64_t required_align[3] = {0, 0, 0};  ///< a, b, c: alignment a launch must have (0: none)
};

/// Resolves `plan` against `module` (loaded from `compiled`): functions, > 48 KiB dynamic shared
/// memory opted in, arguments by tensor name ("a", "b", "c", "workspace"). Throws ktune::Error
/// (kBadInput) for a plan that names another tensor or has too many arguments.
GemmLauncher make_gemm_launcher(const kernel_templates::LaunchPlan& plan,
                                const std::vector<kernel_templates::AlignmentRule>& alignment,
                                const harness::CompileResult& compiled, const harness::Module& module);

/// Launches every step on `stream` (hot path). Throws ktune::Error on a failed launch.
void launch_gemm(const GemmLauncher& l, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr workspace,
                 CUstream stream);

}  // namespace ktune::tuner::detail
