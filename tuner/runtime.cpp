/// ktune::Runtime (include/ktune/ktune.hpp): the dispatch runtime. The hot path is a shared-lock
/// hash lookup of (m, n, k, dtype, layout), the D8 checks, and the launches; everything else happens
/// once per key in prepare().

#include <cuda.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cache/best_index.hpp"
#include "cache/config_cache.hpp"
#include "cache/shape.hpp"
#include "harness/context.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/ktune.hpp"
#include "tuner/cache_compile_store.hpp"
#include "tuner/detail/gemm_launcher.hpp"

namespace ktune {

const char* to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
  }
  return "?";
}

const char* to_string(Layout layout) noexcept { return layout == Layout::kNN ? "nn" : "nt"; }

namespace {

constexpr int64_t kMaxDim = 2147483647;  // the kernels take int32 dimensions

struct Key {
  int64_t m, n, k;
  DType dtype;
  Layout layout;
  bool operator==(const Key&) const = default;
};

struct KeyHash {
  std::size_t operator()(const Key& key) const noexcept {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    auto mix = [&h](uint64_t v) {
      h = (h ^ v) * 0xBF58476D1CE4E5B9ULL;
      h ^= h >> 31;
    };
    mix(static_cast<uint64_t>(key.m));
    mix(static_cast<uint64_t>(key.n));
    mix(static_cast<uint64_t>(key.k));
    mix(static_cast<uint64_t>(key.dtype) * 2 + static_cast<uint64_t>(key.layout));
    return h;
  }
};

struct Entry {
  tuner::detail::GemmLauncher launcher;
  CUdeviceptr own_workspace = 0;
  GemmPlanInfo info;
};

std::size_t elem_bytes(DType d) { return d == DType::kF32 ? 4 : 2; }

void check_args(const void* a, const void* b, const void* c, int64_t m, int64_t n, int64_t k, DType dtype) {
  if (m < 1 || n < 1 || k < 1 || m > kMaxDim || n > kMaxDim || k > kMaxDim) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("gemm: dimensions m={}, n={}, k={} must each be in [1, 2^31-1]", m, n, k));
  }
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16)
    throw Error(ErrorKind::kBadInput, "gemm: unknown dtype");
  if (a == nullptr || b == nullptr || c == nullptr) {
    throw Error(ErrorKind::kBadInput, fmt::format("gemm: null pointer ({} is null)", a == nullptr   ? "A"
                                                                                     : b == nullptr ? "B"
                                                                                                    : "C"));
  }
  const auto align = elem_bytes(dtype);
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

struct Runtime::Impl {
  RuntimeOptions options;
  harness::PrimaryContext context;
  harness::DeviceInfo device;
  kernel_templates::SourceLibrary sources = kernel_templates::SourceLibrary::from_environment();
  std::string source_hash;
  std::optional<cache::ConfigCache> db;
  cache::BestIndex index;
  std::unique_ptr<tuner::CacheCompileStore> store;
  std::unique_ptr<harness::NvrtcCompiler> compiler;

  std::shared_mutex map_mutex;
  std::unordered_map<Key, std::unique_ptr<Entry>, KeyHash> entries;
  std::mutex build_mutex;                          ///< one cold build at a time; guards modules
  std::map<std::string, harness::Module> modules;  ///< by compile cache key

  explicit Impl(RuntimeOptions o) : options(std::move(o)), context(options.device) {
    device = harness::query_device(options.device);
    source_hash = sources.hash(kernel_templates::kernel_source_files("gemm"));
    const auto path = cache::resolve_db_path(
        options.db_path.empty() ? std::nullopt : std::optional<std::string>(options.db_path));
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      db.emplace(cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly));
      index = cache::BestIndex::load(*db, device.name, {{"gemm", source_hash}});
      store = std::make_unique<tuner::CacheCompileStore>(*db, "gemm", source_hash, false);
    }
    compiler = std::make_unique<harness::NvrtcCompiler>(store.get());
  }

  ~Impl() {
    try {
      context.make_current();  // cuMemFree and cuModuleUnload act on the current context
    } catch (const Error& e) {
      fmt::print(stderr, "ktune::Runtime: cannot make the context current to free memory: {}\n", e.what());
      return;
    }
    for (auto& [key, e] : entries) {
      if (e->own_workspace != 0) {
        const CUresult r = harness::driver().cuMemFree(e->own_workspace);
        if (r != CUDA_SUCCESS)
          fmt::print(stderr, "ktune::Runtime: cuMemFree failed: {}\n", harness::cu_error_name(r));
      }
    }
  }

  /// Makes the runtime's context current when the thread has none; refuses another one (the
  /// modules belong to this device's primary context).
  void ensure_context() const {
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

  /// The config for a key: tuned, nearest tuned, or the default, per the miss policy.
  std::pair<kernel_templates::Config, GemmPlanInfo> choose(const kernel_templates::Problem& p,
                                                           const Key& key) const {
    namespace kt = kernel_templates;
    GemmPlanInfo info;
    const std::string shape = p.shape_text();
    const std::string layout = to_string(key.layout);
    std::optional<cache::BestConfig> best;
    if (const cache::BestConfig* exact = index.find("gemm", shape, to_string(key.dtype), layout)) {
      best = *exact;
    } else if (options.on_miss == MissPolicy::kNearest) {
      best = index.find_or_nearest("gemm", cache::Shape::parse(shape), to_string(key.dtype), layout);
    } else if (options.on_miss == MissPolicy::kError) {
      throw Error(
          ErrorKind::kNotFound,
          fmt::format("no tuned gemm config for {} {} {} on {}: run `ktune tune --kernel gemm --shape {} "
                      "--dtype {} --layout {}`",
                      shape, to_string(key.dtype), layout, device.name, shape, to_string(key.dtype), layout));
    }
    if (best) {
      kt::Config c = kt::Config::from_json(nlohmann::json::parse(best->config_json));
      const auto specs = kt::specs_of("gemm");
      const bool known =
          std::any_of(specs.begin(), specs.end(), [&](auto* s) { return s->variant() == c.variant; });
      if (known && !kt::find_spec("gemm", c.variant).rejection(p, c)) {
        info.source = best->fallback ? GemmPlanInfo::Source::kNearest : GemmPlanInfo::Source::kTuned;
        info.config_name = best->config_name;
        info.tuned_shape = best->tuned_shape;
        info.tuned_median_us = best->stats.median_us;
        return {c, info};
      }
    }
    if (options.on_miss == MissPolicy::kError && !best)
      throw Error(ErrorKind::kNotFound, "no tuned gemm config");
    const kt::KernelSpec& tiled = kt::find_spec("gemm", "tiled");  // serves every gemm problem
    kt::Config c = tiled.default_config(p);
    info.source = GemmPlanInfo::Source::kDefault;
    info.config_name = tiled.canonical_name(p, c);
    return {c, info};
  }

  /// The cold path. `capturing`: the caller's stream, checked for capture (absent for prepare).
  Entry* build(const Key& key, std::optional<CUstream> capturing) {
    namespace kt = kernel_templates;
    std::lock_guard build_lock(build_mutex);
    {
      std::shared_lock lock(map_mutex);
      if (auto it = entries.find(key); it != entries.end()) return it->second.get();
    }
    ensure_context();
    if (capturing) {
      CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
      KTUNE_CU_CHECK(harness::driver().cuStreamIsCapturing(*capturing, &status));
      if (status != CU_STREAM_CAPTURE_STATUS_NONE) {
        throw Error(ErrorKind::kBadInput,
                    fmt::format("gemm m={},n={},k={} {} {}: first call inside CUDA graph capture; call "
                                "Runtime::prepare_gemm for this shape before capturing",
                                key.m, key.n, key.k, to_string(key.dtype), to_string(key.layout)));
      }
    }
    const kt::Problem p{{{"m", key.m}, {"n", key.n}, {"k", key.k}},
                        key.dtype == DType::kF32   ? kt::DType::kF32
                        : key.dtype == DType::kF16 ? kt::DType::kF16
                                                   : kt::DType::kBF16,
                        to_string(key.layout)};
    auto [config, info] = choose(p, key);
    const kt::KernelSpec& spec = kt::find_spec("gemm", config.variant);
    const kt::CompileSpec cs = spec.compile_spec(p, config);
    const harness::CompileRequest request = kt::make_compile_request(cs, sources, device.arch());
    harness::CompileResult compiled;
    if (!options.compile_on_miss) {
      auto hit = store ? store->find(compiler->cache_key(request)) : std::nullopt;
      if (!hit) {
        throw Error(
            ErrorKind::kNotFound,
            fmt::format("{} is not in the compile cache and compile_on_miss is off", info.config_name));
      }
      compiled = *hit;
      compiled.cache_key = compiler->cache_key(request);
    } else {
      compiled = compiler->compile(request);
      if (compiled.cache_key.empty()) compiled.cache_key = compiler->cache_key(request);
    }
    auto module = modules.find(compiled.cache_key);
    if (module == modules.end())
      module = modules.emplace(compiled.cache_key, harness::Module::load(compiled.cubin)).first;

    auto entry = std::make_unique<Entry>();
    entry->launcher = tuner::detail::make_gemm_launcher(spec.launch_plan(p, config),
                                                        spec.alignment(p, config), compiled, module->second);
    info.launches = entry->launcher.steps.size();
    info.workspace_bytes = entry->launcher.workspace_bytes;
    if (info.workspace_bytes > 0)
      KTUNE_CU_CHECK(harness::driver().cuMemAlloc(&entry->own_workspace, info.workspace_bytes));
    entry->info = std::move(info);
    Entry* out = entry.get();
    std::unique_lock lock(map_mutex);
    entries.emplace(key, std::move(entry));
    return out;
  }

  const Entry& entry(const Key& key, std::optional<CUstream> stream) {
    {
      std::shared_lock lock(map_mutex);
      if (auto it = entries.find(key); it != entries.end()) return *it->second;
    }
    return *build(key, stream);
  }
};

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Runtime::~Runtime() = default;

const std::string& Runtime::gpu_name() const { return impl_->device.name; }
std::size_t Runtime::tuned_keys() const { return impl_->index.size(); }

bool Runtime::ready(int64_t m, int64_t n, int64_t k, DType dtype, Layout layout) const noexcept {
  std::shared_lock lock(impl_->map_mutex);
  return impl_->entries.find(Key{m, n, k, dtype, layout}) != impl_->entries.end();
}

GemmPlanInfo Runtime::prepare_gemm(int64_t m, int64_t n, int64_t k, DType dtype, Layout layout) {
  const int32_t dummy = 0;  // 4-byte aligned: passes the element-alignment check of every dtype
  check_args(&dummy, &dummy, &dummy, m, n, k, dtype);
  return impl_->entry({m, n, k, dtype, layout}, std::nullopt).info;
}

void Runtime::gemm(const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k, DType dtype,
                   Layout layout, Stream stream) {
  gemm(a, b, c, m, n, k, dtype, layout, nullptr, 0, stream);
}

void Runtime::gemm(const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k, DType dtype,
                   Layout layout, void* workspace, std::size_t workspace_bytes, Stream stream) {
  check_args(a, b, c, m, n, k, dtype);
  const CUstream s = reinterpret_cast<CUstream>(stream);
  const Entry& e = impl_->entry({m, n, k, dtype, layout}, s);
  const auto& l = e.launcher;
  const void* ptrs[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    if (l.required_align[i] > 0 &&
        reinterpret_cast<uintptr_t>(ptrs[i]) % static_cast<uintptr_t>(l.required_align[i]) != 0) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("gemm: config {} requires {} aligned to {} bytes; {} is not",
                              e.info.config_name, "ABC"[i], l.required_align[i], ptrs[i]));
    }
  }
  CUdeviceptr ws = e.own_workspace;
  if (workspace != nullptr) {
    if (workspace_bytes < l.workspace_bytes) {
      throw Error(ErrorKind::kBadInput, fmt::format("gemm: workspace of {} bytes; config {} needs {}",
                                                    workspace_bytes, e.info.config_name, l.workspace_bytes));
    }
    ws = reinterpret_cast<CUdeviceptr>(workspace);
  }
  impl_->ensure_context();
  tuner::detail::launch_gemm(l, reinterpret_cast<CUdeviceptr>(a), reinterpret_cast<CUdeviceptr>(b),
                             reinterpret_cast<CUdeviceptr>(c), ws, s);
}

}  // namespace ktune
