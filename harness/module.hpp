#pragma once
/// RAII CUmodule loaded from a CUBIN (cuModuleLoadData) in the current context, and a launch helper.

#include <cuda.h>

#include <string>
#include <string_view>

#include "ktune/error.hpp"

namespace ktune::harness {

/// Grid or block extent.
struct Dim3 {
  unsigned x = 1;
  unsigned y = 1;
  unsigned z = 1;
};

class Module {
 public:
  Module() = default;
  /// Loads `cubin` (bytes from NvrtcCompiler) into the current context. Throws Error on failure
  /// (e.g. CUDA_ERROR_NO_BINARY_FOR_GPU for a cubin of another architecture).
  static Module load(std::string_view cubin);
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  ~Module();

  /// The kernel with this lowered (mangled) name, as CompileResult::lowered_names gives it.
  /// Throws Error(kRuntime, CUDA_ERROR_NOT_FOUND, naming the kernel) when absent.
  CUfunction function(const std::string& lowered_name) const;
  CUmodule get() const noexcept { return module_; }

 private:
  explicit Module(CUmodule m) : module_(m) {}
  CUmodule module_ = nullptr;
};

/// cuLaunchKernel(func, grid, block, smem_bytes, stream, args); throws Error on a launch failure.
/// `args[i]` points at the i-th kernel argument's value.
void launch(CUfunction func, Dim3 grid, Dim3 block, unsigned smem_bytes, CUstream stream, void** args);

}  // namespace ktune::harness
