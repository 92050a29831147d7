#pragma once
/// ktune::Runtime's state and its one generic path, shared by the entry points of every operator
/// (runtime/runtime.cpp: gemm and the runtime itself; runtime/runtime_ops.cpp: the other operators).
/// The hot path is a shared-lock hash lookup of the PlanKey, the plan's alignment checks and
/// launch_plan; everything else happens once per key in build().

#include <cuda.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>

#include "cache/best_index.hpp"
#include "cache/config_cache.hpp"
#include "harness/context.hpp"
#include "harness/device_info.hpp"
#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "ktune/ktune.hpp"
#include "runtime/cache_compile_store.hpp"
#include "runtime/detail/library_plan.hpp"
#include "runtime/detail/op_binding.hpp"
#include "runtime/detail/plan_launcher.hpp"
#include "runtime/miss_recorder.hpp"

namespace ktune {

/// One prepared key: its launcher, the runtime-owned workspace, and how it is served.
struct RuntimePlan {
  runtime::detail::PlanLauncher launcher;
  /// Set instead of `launcher`'s steps when a cuBLASLt algorithm won the key.
  std::unique_ptr<runtime::detail::LibraryGemmPlan> library;
  CUdeviceptr own_workspace = 0;
  PlanInfo info;
};

struct Runtime::Impl {
  /// A kernel's compile cache (the database's, read-only) and the compiler that uses it.
  struct KernelCompiler {
    std::unique_ptr<runtime::CacheCompileStore> store;
    std::unique_ptr<harness::NvrtcCompiler> compiler;
  };

  RuntimeOptions options;
  harness::PrimaryContext context;
  harness::DeviceInfo device;
  /// The built-in templates and the user kernels (RuntimeOptions::kernel_dirs, $KTUNE_KERNEL_DIR),
  /// loaded before the library is made.
  kernel_templates::SourceLibrary sources = user_kernel_sources(options);
  std::map<std::string, std::string> source_hashes;  ///< kernel -> template source hash
  std::optional<cache::ConfigCache> db;
  cache::BestIndex index;

  std::shared_mutex map_mutex;
  std::unordered_map<runtime::detail::PlanKey, std::unique_ptr<RuntimePlan>, runtime::detail::PlanKeyHash>
      plans;
  /// The default config's plan of a key, built when a call's pointers miss an alignment its
  /// chosen config requires (e.g. the bulk-copy rmsnorm on a view that is not 16-byte aligned).
  std::unordered_map<runtime::detail::PlanKey, std::unique_ptr<RuntimePlan>, runtime::detail::PlanKeyHash>
      fallbacks;
  std::mutex build_mutex;                           ///< one cold build at a time; guards what follows
  std::map<std::string, harness::Module> modules;   ///< by compile cache key
  std::map<std::string, KernelCompiler> compilers;  ///< by kernel name
  /// cuBLASLt for keys whose winner is a library algorithm: opened on the first such key.
  runtime::detail::LibraryHandles library;
  /// Where keys served without a tuned config are recorded (null: nowhere); guarded by build_mutex.
  std::unique_ptr<runtime::MissRecorder> recorder;
  /// User kernels' plans by "kernel shape dtype" (user_kernel_launch.cpp), guarded by map_mutex.
  std::unordered_map<std::string, std::unique_ptr<RuntimePlan>> user_plans;

  explicit Impl(RuntimeOptions o);

  /// Loads the user kernel folders of `o` and $KTUNE_KERNEL_DIR, then makes the source library.
  static kernel_templates::SourceLibrary user_kernel_sources(const RuntimeOptions& o);

  /// The plan of a user kernel's key, built on first use (user_kernel_launch.cpp).
  const RuntimePlan& user_plan(const std::string& kernel, const ProblemDims& dims, DType dtype);
  ~Impl();

  /// Makes the runtime's context current when the thread has none; refuses another one (the
  /// modules belong to this device's primary context).
  void ensure_context() const;

  /// The plan of `key` (with `fallback`: its default config's plan), built on first use.
  /// `capturing`: the caller's stream, checked for capture before a build (absent for prepare).
  const RuntimePlan& plan(const runtime::detail::PlanKey& key, std::optional<CUstream> capturing,
                          bool fallback = false);

  /// The hot path of every operator: the plan of `key`, a null check of every slot the plan
  /// reads, the alignment the config requires of pointers and row strides (when one misses it:
  /// the default config's plan, whose alignment is then checked), the workspace (`workspace` when
  /// given, else the plan's own), then the launches. `slots` in the binding's order; `scalars` by
  /// binding index, the row strides included.
  void run(const runtime::detail::PlanKey& key, std::span<const void* const> slots,
           std::span<const double> scalars, void* workspace, std::size_t workspace_bytes, Stream stream);

 private:
  RuntimePlan* build_user_plan(const std::string& key_text, const kernel_templates::KernelSpec& spec,
                               const kernel_templates::Problem& problem);
  /// Builds the plan of `key` into `plans` (the chosen config) or, with `fallback`, into
  /// `fallbacks` (the default config).
  RuntimePlan* build(const runtime::detail::PlanKey& key, std::optional<CUstream> capturing,
                     bool fallback = false);
  KernelCompiler& compiler_for(const std::string& kernel);
  /// The launcher's functions from `compiled`'s module (loaded once per compile cache key), then
  /// `info` with the launcher's launches and workspace, the plan's own workspace allocated.
  void finish_kernel_plan(RuntimePlan& plan, const harness::CompileResult& compiled, PlanInfo info);
  /// `info` into the plan, and the plan's own workspace of info.workspace_bytes allocated.
  static void finish_plan(RuntimePlan& plan, PlanInfo info);
  /// The library plan of a key whose winner is a library algorithm, or null (with the reason in
  /// `why`) when it cannot run here: the key then takes the default config.
  std::unique_ptr<runtime::detail::LibraryGemmPlan> library_plan(const runtime::detail::PlanKey& key,
                                                                 const ktune::Config& config,
                                                                 std::string* why);
};

}  // namespace ktune
