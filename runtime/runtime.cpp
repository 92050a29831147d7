/// ktune::Runtime (include/ktune/ktune.hpp): the runtime itself, its generic plan path
/// (runtime/detail/runtime_impl.hpp) and the gemm entry points. The other operators' entry points
/// are in runtime_ops.cpp.

#include <cuda.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "cache/config_cache.hpp"
#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "kernel_templates/user_kernel/user_kernels.hpp"
#include "ktune/ktune.hpp"
#include "runtime/detail/plan_chooser.hpp"
#include "runtime/detail/runtime_impl.hpp"

namespace ktune {

const char* to_string(Layout layout) noexcept { return layout == Layout::kNN ? "nn" : "nt"; }

namespace {

using runtime::detail::OpKind;
using runtime::detail::PlanKey;

/// Most tensor slots an entry point has (rope_append: q, k, v, two weights, table, positions, block
/// table, q_out, both caches).
constexpr std::size_t kMaxSlots = 11;

/// gemm's mode: the layout, then the epilogue (OpBinding::modes "nt", "nn", "nt+bias", ...).
uint8_t gemm_mode(Layout layout, Epilogue epilogue) {
  if (layout != Layout::kNT && layout != Layout::kNN)
    throw Error(ErrorKind::kBadInput, fmt::format("gemm: unknown layout {}", static_cast<int>(layout)));
  const auto e = static_cast<int>(epilogue);
  if (e < 0 || e > 3) throw Error(ErrorKind::kBadInput, fmt::format("gemm: unknown epilogue {}", e));
  return static_cast<uint8_t>(2 * e + (layout == Layout::kNN ? 1 : 0));
}

bool reads_bias(Epilogue e) { return e == Epilogue::kBias || e == Epilogue::kBiasSilu; }

PlanKey gemm_key(const GemmArgs& g) {
  runtime::detail::check_dims("gemm", {{"m", g.m}, {"n", g.n}, {"k", g.k}});
  if (g.dtype != DType::kF32 && g.dtype != DType::kF16 && g.dtype != DType::kBF16) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("gemm: dtype {} is not supported (f32, f16, bf16; fp8 has its own operator)",
                            to_string(g.dtype)));
  }
  // The key does not hold the row strides, but a bad one is refused at prepare too.
  runtime::detail::gemm_row_strides(g);
  return {OpKind::kGemm, gemm_mode(g.layout, g.epilogue), g.dtype, {g.m, g.n, g.k, 0, 0}};
}

void check_gemm_pointers(const GemmArgs& g) {
  const std::size_t e = runtime::detail::element_bytes(g.dtype);
  runtime::detail::check_pointers("gemm", {{"a", g.a, e}, {"b", g.b, e}, {"c", g.c, e}});
  if (reads_bias(g.epilogue)) runtime::detail::check_pointers("gemm", {{"bias", g.bias, e}});
}

}  // namespace

Runtime::Impl::Impl(RuntimeOptions o) : options(std::move(o)), context(options.device) {
  device = harness::query_device(options.device);
  for (OpKind op : runtime::detail::kAllOps) {
    const std::string& kernel = runtime::detail::binding_of(op).kernel;
    source_hashes[kernel] = sources.hash(kernel_templates::kernel_source_files(kernel));
  }
  for (const auto* user : kernel_templates::user_kernels()) {
    const std::string kernel(user->kernel());
    source_hashes[kernel] = sources.hash(kernel_templates::kernel_source_files(kernel));
  }
  const auto path = cache::resolve_db_path(
      options.db_path.empty() ? std::nullopt : std::optional<std::string>(options.db_path));
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    db.emplace(cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly));
    index = cache::BestIndex::load(*db, device.name, source_hashes);
  }
  std::string record = options.record_misses;
  if (const char* env = std::getenv("KTUNE_RECORD_MISSES"); record.empty() && env != nullptr) record = env;
  if (!record.empty()) recorder = std::make_unique<runtime::MissRecorder>(record);
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
  const auto hash = source_hashes.find(kernel);
  if (hash == source_hashes.end())
    throw Error(ErrorKind::kRuntime,
                fmt::format("ktune::Runtime has no template hash for kernel {}", kernel));
  KernelCompiler kc;
  if (db) kc.store = std::make_unique<runtime::CacheCompileStore>(*db, kernel, hash->second, false);
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
  const runtime::detail::OpBinding& binding = runtime::detail::binding_of(key.op);
  runtime::detail::check_arch(key, device.arch());
  runtime::detail::check_problem(key, device.arch());
  ensure_context();
  if (capturing) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    KTUNE_CU_CHECK(harness::driver().cuStreamIsCapturing(*capturing, &status));
    if (status != CU_STREAM_CAPTURE_STATUS_NONE) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("{}: first call inside CUDA graph capture; call Runtime::prepare with this "
                              "call's arguments before capturing",
                              runtime::detail::describe(key)));
    }
  }
  const kt::Problem p = runtime::detail::make_problem(key);
  const auto record_miss = [&] {
    if (recorder) recorder->record({binding.kernel, p.shape_text(), key.dtype, p.layout});
  };
  std::pair<ktune::Config, PlanInfo> chosen;
  try {
    chosen = fallback ? runtime::detail::default_plan(key, device.arch())
                      : runtime::detail::choose_plan(index, options.on_miss, device, key);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kNotFound) record_miss();  // MissPolicy::kError: still a key to tune
    throw;
  }
  auto& [config, info] = chosen;
  if (!fallback && info.source != PlanInfo::Source::kTuned) record_miss();
  auto plan = std::make_unique<RuntimePlan>();
  if (harness::is_cublaslt_config(config)) {
    std::string why;
    plan->library = library_plan(key, config, &why);
    if (plan->library) {
      info.launches = 1;
      info.workspace_bytes = plan->library->workspace_bytes();
      finish_plan(*plan, std::move(info));
      RuntimePlan* out = plan.get();
      std::unique_lock lock(map_mutex);
      map.emplace(key, std::move(plan));
      return out;
    }
    // The winner's library is another version, or refuses the algorithm here: the default config.
    std::tie(config, info) = runtime::detail::default_plan(key, device.arch());
  }
  const kt::KernelSpec& spec = kt::find_spec(binding.kernel, config.variant);
  // Bind before compiling: a plan this entry point cannot serve fails without NVRTC's cost.
  plan->launcher = runtime::detail::bind_plan(runtime::detail::launch_plan_for(key, spec, p, config),
                                              spec.alignment(p, config), binding.slots, binding.scalars,
                                              binding.row_strides);
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
  finish_kernel_plan(*plan, compiled, std::move(info));
  RuntimePlan* out = plan.get();
  std::unique_lock lock(map_mutex);
  map.emplace(key, std::move(plan));
  return out;
}

void Runtime::Impl::finish_kernel_plan(RuntimePlan& plan, const harness::CompileResult& compiled,
                                       PlanInfo info) {
  auto module = modules.find(compiled.cache_key);
  if (module == modules.end())
    module = modules.emplace(compiled.cache_key, harness::Module::load(compiled.cubin)).first;
  runtime::detail::resolve_functions(plan.launcher, compiled, module->second);
  info.launches = plan.launcher.steps.size();
  info.workspace_bytes = plan.launcher.workspace_bytes;
  finish_plan(plan, std::move(info));
}

void Runtime::Impl::finish_plan(RuntimePlan& plan, PlanInfo info) {
  if (info.workspace_bytes > 0)
    KTUNE_CU_CHECK(harness::driver().cuMemAlloc(&plan.own_workspace, info.workspace_bytes));
  plan.info = std::move(info);
}

std::unique_ptr<runtime::detail::LibraryGemmPlan> Runtime::Impl::library_plan(const PlanKey& key,
                                                                              const ktune::Config& config,
                                                                              std::string* why) {
  try {
    return std::make_unique<runtime::detail::LibraryGemmPlan>(library, key, config);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kBadInput && e.kind() != ErrorKind::kNoDevice) throw;
    *why = e.what();
    return nullptr;
  }
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
  if (chosen->library) {
    if (chosen->library->serves(slots, scalars)) {
      CUdeviceptr ws = chosen->own_workspace;
      std::size_t ws_bytes = chosen->info.workspace_bytes;
      if (workspace != nullptr) {
        ws = reinterpret_cast<CUdeviceptr>(workspace);
        ws_bytes = workspace_bytes;
      }
      ensure_context();
      chosen->library->run(slots, scalars, ws, ws_bytes, s);
      return;
    }
    chosen = &plan(key, s, true);  // pointers or strides the algorithm does not take: the default config
  }
  if (scalars.size() < chosen->launcher.scalar_count) {
    throw Error(ErrorKind::kRuntime,
                fmt::format("{}: {} call-time scalars for a plan of {}", runtime::detail::describe(key),
                            scalars.size(), chosen->launcher.scalar_count));
  }
  int misaligned = chosen->launcher.misaligned_slot(slots, scalars);
  if (misaligned >= 0) {
    // The chosen config requires an alignment these pointers or row strides miss: the default
    // config serves the call (an alignment it requires too is the error below).
    chosen = &plan(key, s, true);
    misaligned = chosen->launcher.misaligned_slot(slots, scalars);
  }
  const RuntimePlan& p = *chosen;
  const auto& l = p.launcher;
  if (slots.size() > kMaxSlots || slots.size() != l.slot_used.size())
    throw Error(ErrorKind::kRuntime,
                fmt::format("{}: {} slots for a plan of {}", runtime::detail::describe(key), slots.size(),
                            l.slot_used.size()));
  std::array<CUdeviceptr, kMaxSlots> ptrs{};
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (l.slot_used[i] && slots[i] == nullptr) {
      throw Error(
          ErrorKind::kBadInput,
          fmt::format("{}: config {} reads {}, which is null", runtime::detail::binding_of(key.op).kernel,
                      p.info.config_name, runtime::detail::binding_of(key.op).slots[i]));
    }
    ptrs[i] = reinterpret_cast<CUdeviceptr>(slots[i]);
  }
  if (misaligned >= 0) {
    const auto i = static_cast<std::size_t>(misaligned);
    const runtime::detail::SlotStride& stride = l.slot_stride[i];
    const std::string& kernel = runtime::detail::binding_of(key.op).kernel;
    const std::string& slot = runtime::detail::binding_of(key.op).slots[i];
    if (stride.scalar < 0) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("{}: config {} requires {} aligned to {} bytes; {} is not", kernel,
                              p.info.config_name, slot, l.slot_align[i], slots[i]));
    }
    const auto row_bytes =
        static_cast<int64_t>(scalars[static_cast<std::size_t>(stride.scalar)]) * stride.element_bytes;
    throw Error(ErrorKind::kBadInput,
                fmt::format("{}: config {} requires {} (its address and its row stride) aligned to {} bytes; "
                            "{} with rows {} bytes apart is not",
                            kernel, p.info.config_name, slot, l.slot_align[i], slots[i], row_bytes));
  }
  CUdeviceptr ws = p.own_workspace;
  if (workspace != nullptr) {
    if (workspace_bytes < l.workspace_bytes) {
      throw Error(ErrorKind::kBadInput, fmt::format("{}: workspace of {} bytes; config {} needs {}",
                                                    runtime::detail::binding_of(key.op).kernel,
                                                    workspace_bytes, p.info.config_name, l.workspace_bytes));
    }
    ws = reinterpret_cast<CUdeviceptr>(workspace);
  }
  ensure_context();
  runtime::detail::launch_plan(l, std::span<const CUdeviceptr>(ptrs.data(), slots.size()), ws, scalars, s);
}

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Runtime::~Runtime() = default;

const std::string& Runtime::gpu_name() const { return impl_->device.name; }
std::size_t Runtime::tuned_keys() const { return impl_->index.size(); }

void Runtime::record_misses(const std::string& path) {
  auto recorder = path.empty() ? nullptr : std::make_unique<runtime::MissRecorder>(path);
  std::lock_guard lock(impl_->build_mutex);
  impl_->recorder = std::move(recorder);
}

std::size_t Runtime::prepared_plans() const {
  std::shared_lock lock(impl_->map_mutex);
  return impl_->plans.size();
}

bool Runtime::ready(const GemmArgs& args) const noexcept {
  try {
    const PlanKey key = gemm_key(args);
    std::shared_lock lock(impl_->map_mutex);
    return impl_->plans.find(key) != impl_->plans.end();
  } catch (...) {
    return false;  // a key that cannot be made is not ready
  }
}

PlanInfo Runtime::prepare(const GemmArgs& args) {
  const PlanKey key = gemm_key(args);
  const RuntimePlan& chosen = impl_->plan(key, std::nullopt);
  const std::array<double, 3> strides = runtime::detail::gemm_row_strides(args);
  if (chosen.library ? chosen.library->serves_strides(strides)
                     : chosen.launcher.misaligned_stride(strides) < 0)
    return chosen.info;
  // These row strides miss an alignment the chosen config requires (wgmma_tma: 16-byte rows): the
  // default config will serve the call, so it is the plan to build before a capture.
  return impl_->plan(key, std::nullopt, true).info;
}

void Runtime::gemm(const GemmArgs& args, Stream stream) {
  const PlanKey key = gemm_key(args);
  check_gemm_pointers(args);
  const void* slots[] = {args.a, args.b, args.c, reads_bias(args.epilogue) ? args.bias : nullptr};
  const std::array<double, 3> row_strides = runtime::detail::gemm_row_strides(args);
  impl_->run(key, slots, row_strides, args.workspace.ptr, args.workspace.bytes, stream);
}

}  // namespace ktune
