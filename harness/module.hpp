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

/// Lets `func` launch with `dynamic_bytes` of dynamic shared memory: a launch gets 48 KiB of static
/// plus dynamic shared memory without opting in, so past that (counting the function's static
/// shared memory) this sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES. Throws Error when the
/// device refuses.
void allow_dynamic_smem(CUfunction func, unsigned dynamic_bytes);

/// Lets `func` launch in thread block clusters of more than 8 blocks (the portable size; sm_90 takes
/// up to 16) when its compiled cluster dimensions (`__cluster_dims__`) ask for them, by setting
/// CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED. Nothing for other functions.
void allow_cluster_size(CUfunction func);

/// What every launch site does once per function before launching it: allow_dynamic_smem and
/// allow_cluster_size.
void prepare_function(CUfunction func, unsigned dynamic_bytes);

/// cuLaunchKernel(func, grid, block, smem_bytes, stream, args); throws Error on a launch failure.
/// `args[i]` points at the i-th kernel argument's value.
void launch(CUfunction func, Dim3 grid, Dim3 block, unsigned smem_bytes, CUstream stream, void** args);

}  // namespace ktune::harness
