#pragma once
// Test-side runner of KernelSpec plans on a GPU, written directly against the harness primitives
// (context, buffers, NVRTC, module, launch) so the gpu suite needs no tuning loop. Compiles run on
// a pool of threads ahead of use; modules are loaded once.

#include <cuda.h>

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/context.hpp"
#include "harness/device_buffer.hpp"
#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates::testing {

/// Compiled kernels by CompileSpec, compiled in the background once asked for.
class KernelCache {
 public:
  explicit KernelCache(std::string arch) : arch_(std::move(arch)), library_(SourceLibrary::builtin()) {}
  /// Starts compiling `spec` (no-op when known). Needs no context.
  void prefetch(const CompileSpec& spec);
  /// The function for `name_expression` of `spec`, compiling and loading as needed. Needs the context.
  CUfunction function(const CompileSpec& spec, const std::string& name_expression);

 private:
  static std::string key(const CompileSpec& spec);
  std::string arch_;
  SourceLibrary library_;
  harness::NvrtcCompiler compiler_;
  std::map<std::string, std::shared_future<harness::CompileResult>> pending_;
  std::map<std::string, harness::Module> modules_;
};

/// Device 0 with its context and kernel cache, or `skip_reason` ("no usable GPU: ...") and no context.
struct GpuSession {
  std::unique_ptr<harness::PrimaryContext> context;
  std::unique_ptr<KernelCache> kernels;
  std::string arch;
  std::string skip_reason;
};

/// Why a suite cannot run on an architecture ("sm_90"), or nullopt.
using ArchRejection = std::function<std::optional<std::string>(const std::string& arch)>;

/// The executable's session, opened on first call; `arch_rejection` (first call only) turns an
/// unsuitable device into a skip reason.
GpuSession& gpu_session(const ArchRejection& arch_rejection = {});

/// Device memory of one problem's tensors, by name. A tensor may be placed `offset_bytes` past the
/// start of its allocation (to misalign it on purpose).
class DeviceTensors {
 public:
  /// Allocates `spec` unless a tensor of that name and at least its size exists (inputs are shared by
  /// plan and reference); a smaller one is replaced.
  void ensure(const TensorSpec& spec, std::size_t offset_bytes = 0);
  CUdeviceptr ptr(const std::string& name) const;
  /// Fills with 0xFF bytes: NaN in every float dtype, so an unwritten element fails verification.
  void poison(const std::string& name);
  void upload(const std::string& name, const std::vector<uint8_t>& bytes);
  std::vector<uint8_t> download(const std::string& name, std::size_t bytes) const;

 private:
  struct Slot {
    harness::DeviceBuffer buffer;
    std::size_t offset = 0;
    std::size_t bytes = 0;
  };
  std::map<std::string, Slot> slots_;
};

/// Runs every launch of `plan` in order on the default stream and synchronizes.
void run_plan(KernelCache& kernels, const CompileSpec& compile, const LaunchPlan& plan,
              DeviceTensors& tensors);

/// Random values (sign * (128 + r) / 256, r in [0, 128): never zero, exactly representable in f32,
/// f16 and bf16) encoded in `dtype`; `values` receives the same numbers as doubles.
std::vector<uint8_t> random_tensor(DType dtype, int64_t elements, uint64_t seed, std::vector<double>& values);

}  // namespace ktune::kernel_templates::testing
