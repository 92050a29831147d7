/// ktune::Runtime (include/ktune/ktune.hpp): the runtime itself, its generic plan path
/// (tuner/detail/runtime_impl.hpp) and the gemm entry points. The other operators' entry points
/// are in runtime_ops.cpp.

#include <cuda.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include <fmt/format.h>

#include "cache/config_cache.hpp"
#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/ktune.hpp"
#include "tuner/detail/plan_chooser.hpp"
#include "tuner/detail/runtime_impl.hpp"

namespace ktune {

const char* to_string(Layout layout) noexcept { return layout == Layout::kNN ? "nn" : "nt"; }

namespace {

using tuner::detail::OpKind;
using tuner::detail::PlanKey;

constexpr int64_t kMaxDim = 2147483647;  // the kernels take int32 dimensions
/// Most tensor slots an entry point has (rmsnorm_rope: q, k, two weights, table, positions, q_out,
/// k_out).
constexpr std::size_t kMaxSlots = 8;

PlanKey gemm_key(int64_t m, int64_t n, int64_t k, DType dtype, Layout layout) {
  return {OpKind::kGemm, static_cast<uint8_t>(layout == Layout::kNN ? 1 : 0), dtype, {m, n, k, 0, 0}};
}

void check_args(const void* a, const void* b, const void* c, int64_t m, int64_t n, int64_t k, DType dtype) {
  if (m < 1 || n < 1 || k < 1 || m > kMaxDim || n > kMaxDim || k > kMaxDim) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("gemm: dimensions m={}, n={}, k={} must each be in [1, 2^31-1]", m, n, k));
  }
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("gemm: dtype {} is not supported (f32, f16, bf16; fp8 has its own operator)",
                            to_string(dtype)));
  }
  if (a == nullptr || b == nullptr || c == nullptr) {
    throw Error(ErrorKind::kBadInput, fmt::format("gemm: null pointer ({} is null)", a == nullptr   ? "A"
                                                                                     : b == nullptr ? "B"
                                                                                                    : "C"));
  }
  const auto align = tuner::detail::element_bytes(dtype);
  const void* ptrs[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    if (reinterpret_cast<uintptr_t>(ptrs[i]) % align != 0) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("gemm: {} at {} is not aligned to its {}-byte {} elements", "ABC"[i], ptrs[i],
                              align, to_string(dtype)));
    }
  }
}

}  // namespace

Runtime::Impl::Impl(RuntimeOptions o) : options(std::move(o)), context(options.device) {
  device = harness::query_device(options.device);
  for (OpKind op :
       {OpKind::kGemm, OpKind::kRmsNorm, OpKind::kRmsNormRope, OpKind::kSoftmax, OpKind::kSwiglu}) {
    const std::string& kernel = tuner::detail::binding_of(op).kernel;
    source_hashes[kernel] = sources.hash(kernel_templates::kernel_source_files(kernel));
  }
  const auto path = cache::resolve_db_path(
      options.db_path.empty() ? std::nullopt : std::optional<std::string>(options.db_path));
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    db.emplace(cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly));
    index = cache::BestIndex::load(*db, device.name, source_hashes);
  }
}

Runtime::Impl::~Impl() {
  try {
    context.make_current();  // cuMemFree and cuModuleUnload act on the current context
  } catch (const Error& e) {
    fmt::print(stderr, "ktune::Runtime: cannot make the context current to free memory: {}\n", e.what());
    return;
  }
  for (auto* map : {&plans, &fallbacks}) {
    for (auto& [key, p] : *map) {
      if (p->own_workspace != 0) {
        const CUresult r = harness::driver().cuMemFree(p->own_workspace);
        if (r != CUDA_SUCCESS)
          fmt::print(stderr, "ktune::Runtime: cuMemFree failed: {}\n", harness::cu_error_name(r));
      }
    }
  }
}

void Runtime::Impl::ensure_context() const {
  const harness::DriverApi& d = harness::driver();
  CUcontext current = nullptr;
  KTUNE_CU_CHECK(d.cuCtxGetCurrent(&current));
  if (current == context.get()) return;
  if (current == nullptr) {
    context.make_current();
    return;
  }
  throw Error(ErrorKind::kBadInput,
              fmt::format("the calling thread's current CUDA context is not device {}'s primary context "
                          "(the one ktune::Runtime and the CUDA runtime API use)",
                          options.device));
}

Runtime::Impl::KernelCompiler& Runtime::Impl::compiler_for(const std::string& kernel) {
  auto it = compilers.find(kernel);
  if (it != compilers.end()) return it->second;
  KernelCompiler kc;
  if (db) kc.store = std::make_unique<tuner::CacheCompileStore>(*db, kernel, source_hashes.at(kernel), false);
  kc.compiler = std::make_unique<harness::NvrtcCompiler>(kc.store.get());
  return compilers.emplace(kernel, std::move(kc)).first->second;
}

RuntimePlan* Runtime::Impl::build(const PlanKey& key, std::optional<CUstream> capturing, bool fallback) {
  namespace kt = kernel_templates;
  std::lock_guard build_lock(build_mutex);
  auto& map = fallback ? fallbacks : plans;
  {
    std::shared_lock lock(map_mutex);
    if (auto it = map.find(key); it != map.end()) return it->second.get();
  }
  const tuner::detail::OpBinding& binding = tuner::detail::binding_of(key.op);
  tuner::detail::check_problem(key);
  tuner::detail::check_arch(key, device.arch());
  ensure_context();
  if (capturing) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    KTUNE_CU_CHECK(harness::driver().cuStreamIsCapturing(*capturing, &status));
    if (status != CU_STREAM_CAPTURE_STATUS_NONE) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("{}: first call inside CUDA graph capture; call Runtime::{} for this shape "
                              "before capturing",
                              tuner::detail::describe(key), binding.prepare_name));
    }
  }
  const kt::Problem p = tuner::detail::make_problem(key);
  auto [config, info] = fallback ? tuner::detail::default_plan(key)
                                 : tuner::detail::choose_plan(index, options.on_miss, device.name, key);
  const kt::KernelSpec& spec = kt::find_spec(binding.kernel, config.variant);
  auto plan = std::make_unique<RuntimePlan>();
  // Bind before compiling: a plan this entry point cannot serve fails without NVRTC's cost.
  plan->launcher = tuner::detail::bind_plan(tuner::detail::launch_plan_for(key, spec, p, config),
                                            spec.alignment(p, config), binding.slots, binding.scalars);
  const harness::CompileRequest request =
      kt::make_compile_request(spec.compile_spec(p, config), sources, device.arch());
  KernelCompiler& kc = compiler_for(binding.kernel);
  harness::CompileResult compiled;
  if (!options.compile_on_miss) {
    auto hit = kc.store ? kc.store->find(kc.compiler->cache_key(request)) : std::nullopt;
    if (!hit) {
      throw Error(ErrorKind::kNotFound,
                  fmt::format("{} is not in the compile cache and compile_on_miss is off", info.config_name));
    }
    compiled = *hit;
    compiled.cache_key = kc.compiler->cache_key(request);
  } else {
    compiled = kc.compiler->compile(request);
    if (compiled.cache_key.empty()) compiled.cache_key = kc.compiler->cache_key(request);
  }
  auto module = modules.find(compiled.cache_key);
  if (module == modules.end())
    module = modules.emplace(compiled.cache_key, harness::Module::load(compiled.cubin)).first;
  tuner::detail::resolve_functions(plan->launcher, compiled, module->second);
  info.launches = plan->launcher.steps.size();
  info.workspace_bytes = plan->launcher.workspace_bytes;
  if (info.workspace_bytes > 0)
    KTUNE_CU_CHECK(harness::driver().cuMemAlloc(&plan->own_workspace, info.workspace_bytes));
  plan->info = std::move(info);
  RuntimePlan* out = plan.get();
  std::unique_lock lock(map_mutex);
  map.emplace(key, std::move(plan));
  return out;
}

int Runtime::Impl::misaligned_slot(const RuntimePlan& p, std::span<const void* const> slots) {
  const auto& need = p.launcher.slot_align;
  for (std::size_t i = 0; i < slots.size() && i < need.size(); ++i) {
    if (need[i] > 0 && reinterpret_cast<uintptr_t>(slots[i]) % static_cast<uintptr_t>(need[i]) != 0)
      return static_cast<int>(i);
  }
  return -1;
}

const RuntimePlan& Runtime::Impl::plan(const PlanKey& key, std::optional<CUstream> capturing, bool fallback) {
  {
    std::shared_lock lock(map_mutex);
    const auto& map = fallback ? fallbacks : plans;
    if (auto it = map.find(key); it != map.end()) return *it->second;
  }
  return *build(key, capturing, fallback);
}

void Runtime::Impl::run(const PlanKey& key, std::span<const void* const> slots,
                        std::span<const double> scalars, void* workspace, std::size_t workspace_bytes,
                        Stream stream) {
  const CUstream s = reinterpret_cast<CUstream>(stream);
  const RuntimePlan* chosen = &plan(key, s);
  int misaligned = misaligned_slot(*chosen, slots);
  if (misaligned >= 0) {
    // The chosen config requires an alignment these pointers miss: the default config serves the
    // call (an alignment it requires too is the error below).
    chosen = &plan(key, s, true);
    misaligned = misaligned_slot(*chosen, slots);
  }
  const RuntimePlan& p = *chosen;
  const auto& l = p.launcher;
  if (slots.size() > kMaxSlots || slots.size() != l.slot_used.size())
    throw Error(ErrorKind::kRuntime,
                fmt::format("{}: {} slots for a plan of {}", tuner::detail::describe(key), slots.size(),
                            l.slot_used.size()));
  std::array<CUdeviceptr, kMaxSlots> ptrs{};
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (l.slot_used[i] && slots[i] == nullptr) {
      throw Error(
          ErrorKind::kBadInput,
          fmt::format("{}: config {} reads {}, which is null", tuner::detail::binding_of(key.op).kernel,
                      p.info.config_name, tuner::detail::binding_of(key.op).slots[i]));
    }
    ptrs[i] = reinterpret_cast<CUdeviceptr>(slots[i]);
  }
  if (misaligned >= 0) {
    const auto i = static_cast<std::size_t>(misaligned);
    throw Error(ErrorKind::kBadInput,
                fmt::format("{}: config {} requires {} aligned to {} bytes; {} is not",
                            tuner::detail::binding_of(key.op).kernel, p.info.config_name,
                            tuner::detail::binding_of(key.op).slots[i], l.slot_align[i], slots[i]));
  }
  CUdeviceptr ws = p.own_workspace;
  if (workspace != nullptr) {
    if (workspace_bytes < l.workspace_bytes) {
      throw Error(ErrorKind::kBadInput, fmt::format("{}: workspace of {} bytes; config {} needs {}",
                                                    tuner::detail::binding_of(key.op).kernel, workspace_bytes,
                                                    p.info.config_name, l.workspace_bytes));
    }
    ws = reinterpret_cast<CUdeviceptr>(workspace);
  }
  ensure_context();
  tuner::detail::launch_plan(l, std::span<const CUdeviceptr>(ptrs.data(), slots.size()), ws, scalars, s);
}

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Runtime::~Runtime() = default;

const std::string& Runtime::gpu_name() const { return impl_->device.name; }
std::size_t Runtime::tuned_keys() const { return impl_->index.size(); }

std::size_t Runtime::prepared_plans() const {
  std::shared_lock lock(impl_->map_mutex);
  return impl_->plans.size();
}

bool Runtime::ready(int64_t m, int64_t n, int64_t k, DType dtype, Layout layout) const noexcept {
  std::shared_lock lock(impl_->map_mutex);
  return impl_->plans.find(gemm_key(m, n, k, dtype, layout)) != impl_->plans.end();
}

PlanInfo Runtime::prepare_gemm(int64_t m, int64_t n, int64_t k, DType dtype, Layout layout) {
  const int32_t dummy = 0;  // 4-byte aligned: passes the element-alignment check of every dtype
  check_args(&dummy, &dummy, &dummy, m, n, k, dtype);
  return impl_->plan(gemm_key(m, n, k, dtype, layout), std::nullopt).info;
}

void Runtime::gemm(const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k, DType dtype,
                   Layout layout, Stream stream) {
  gemm(a, b, c, m, n, k, dtype, layout, nullptr, 0, stream);
}

void Runtime::gemm(const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k, DType dtype,
                   Layout layout, void* workspace, std::size_t workspace_bytes, Stream stream) {
  check_args(a, b, c, m, n, k, dtype);
  const void* slots[3] = {a, b, c};
  impl_->run(gemm_key(m, n, k, dtype, layout), slots, {}, workspace, workspace_bytes, stream);
}

}  // namespace ktune
