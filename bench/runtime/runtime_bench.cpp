// Dispatch on a hit through ktune::Runtime (goal: the lookup <= 200 ns; a launch costs what a direct
// cuLaunchKernel costs), for gemm and for one operator (rmsnorm: the generic path with a call-time
// scalar). GPU benchmarks report an error and do nothing without a device.
//
//   ktune_bench_runtime [--benchmark_filter=...]       # $KTUNE_DB: a database tuned on this GPU (optional)

#include <benchmark/benchmark.h>

#include <cuda.h>

#include <cstdio>
#include <memory>
#include <string>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/ktune.hpp"
#include "ktune/ktune_runtime.h"

namespace {

// A decode-sized GEMV-like problem: the kernel is a few microseconds, so launch cost shows.
constexpr int64_t kM = 1, kN = 256, kK = 512;
// A decode-step rmsnorm: one row of a 4096 hidden state.
constexpr int64_t kRows = 1, kHidden = 4096;
constexpr float kEps = 1e-5f;
/// Launches between synchronisations: keeps the launch queue from filling (it blocks at ~1024).
constexpr int64_t kSyncEvery = 256;

std::string no_device() {
  try {
    return ktune::harness::device_count() > 0 ? "" : "no CUDA device";
  } catch (const ktune::Error& e) {
    return e.what();
  }
}

struct Fixture {
  std::unique_ptr<ktune::Runtime> rt;
  std::unique_ptr<ktune::harness::DeviceBuffer> a, b, c, x, w, y;
  CUstream stream = nullptr;
  ktune::GemmArgs gemm;
  ktune::RmsNormArgs norm;

  static Fixture& get() {
    static Fixture f;
    return f;
  }
  Fixture() {
    if (!no_device().empty()) return;
    rt = std::make_unique<ktune::Runtime>();
    a = std::make_unique<ktune::harness::DeviceBuffer>(kM * kK * 2);
    b = std::make_unique<ktune::harness::DeviceBuffer>(kN * kK * 2);
    c = std::make_unique<ktune::harness::DeviceBuffer>(kM * kN * 2);
    a->fill_u8(0x3c);
    b->fill_u8(0x3c);
    KTUNE_CU_CHECK(ktune::harness::driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    gemm = {.a = reinterpret_cast<const void*>(a->get()),
            .b = reinterpret_cast<const void*>(b->get()),
            .c = reinterpret_cast<void*>(c->get()),
            .m = kM,
            .n = kN,
            .k = kK};
    rt->prepare(gemm);
    x = std::make_unique<ktune::harness::DeviceBuffer>(kRows * kHidden * 2);
    w = std::make_unique<ktune::harness::DeviceBuffer>(kHidden * 2);
    y = std::make_unique<ktune::harness::DeviceBuffer>(kRows * kHidden * 2);
    x->fill_u8(0x3c);
    w->fill_u8(0x3c);
    norm = {.x = reinterpret_cast<const void*>(x->get()),
            .w = reinterpret_cast<const void*>(w->get()),
            .y = reinterpret_cast<void*>(y->get()),
            .rows = kRows,
            .hidden = kHidden,
            .eps = kEps};
    rt->prepare(norm);
  }
};

void BM_LookupHit(benchmark::State& state) {
  if (const auto why = no_device(); !why.empty()) return state.SkipWithError(why.c_str());
  auto& f = Fixture::get();
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.rt->ready(f.gemm));
  }
}
BENCHMARK(BM_LookupHit);

void BM_RuntimeGemmLaunch(benchmark::State& state) {
  if (const auto why = no_device(); !why.empty()) return state.SkipWithError(why.c_str());
  auto& f = Fixture::get();
  int64_t i = 0;
  for (auto _ : state) {
    f.rt->gemm(f.gemm, reinterpret_cast<ktune::Stream>(f.stream));
    if (++i % kSyncEvery == 0) {
      state.PauseTiming();
      ktune::harness::driver().cuStreamSynchronize(f.stream);
      state.ResumeTiming();
    }
  }
  ktune::harness::driver().cuStreamSynchronize(f.stream);
}
BENCHMARK(BM_RuntimeGemmLaunch);

/// The same default-config kernel launched with cuLaunchKernel directly: the floor.
void BM_DirectLaunch(benchmark::State& state) {
  namespace kt = ktune::kernel_templates;
  if (const auto why = no_device(); !why.empty()) return state.SkipWithError(why.c_str());
  auto& f = Fixture::get();
  const kt::Problem p{{{"m", kM}, {"n", kN}, {"k", kK}}, ktune::DType::kBF16, "nt"};
  const kt::KernelSpec& spec = kt::find_spec("gemm", "tiled");
  const ktune::Config config = spec.default_config(p);
  ktune::harness::NvrtcCompiler compiler;
  const auto compiled = compiler.compile(kt::make_compile_request(
      spec.compile_spec(p, config), kt::SourceLibrary::builtin(), ktune::harness::query_device(0).arch()));
  const kt::LaunchPlan plan = spec.launch_plan(p, config);
  const auto& launch = plan.launches.front();
  auto module = ktune::harness::Module::load(compiled.cubin);
  CUfunction fn = module.function(compiled.lowered_names.at(launch.name_expression));
  CUdeviceptr a = f.a->get(), b = f.b->get(), c = f.c->get(), ws = 0;
  int m = kM, n = kN, k = kK;
  int lda = kK, ldb = kK, ldc = kN;  // contiguous row strides ("nt": B's rows are K long)
  void* args[] = {&a, &b, &c, &ws, &m, &n, &k, &lda, &ldb, &ldc};
  const auto& d = ktune::harness::driver();
  int64_t i = 0;
  for (auto _ : state) {
    d.cuLaunchKernel(fn, launch.dims.grid.x, launch.dims.grid.y, launch.dims.grid.z, launch.dims.block.x, 1,
                     1, launch.dims.dynamic_smem_bytes, f.stream, args, nullptr);
    if (++i % kSyncEvery == 0) {
      state.PauseTiming();
      d.cuStreamSynchronize(f.stream);
      state.ResumeTiming();
    }
  }
  d.cuStreamSynchronize(f.stream);
}
BENCHMARK(BM_DirectLaunch);

/// Runs `launch` in the timed loop, synchronising every kSyncEvery launches outside the timing.
template <typename Launch>
void launch_loop(benchmark::State& state, CUstream stream, Launch&& launch) {
  const auto& d = ktune::harness::driver();
  int64_t i = 0;
  for (auto _ : state) {
    launch();
    if (++i % kSyncEvery == 0) {
      state.PauseTiming();
      d.cuStreamSynchronize(stream);
      state.ResumeTiming();
    }
  }
  d.cuStreamSynchronize(stream);
}

/// The same call through the C dispatch ABI (libktune_runtime.so): struct conversion and the
/// exception guard on top of Runtime::gemm.
void BM_CAbiGemmLaunch(benchmark::State& state) {
  if (const auto why = no_device(); !why.empty()) return state.SkipWithError(why.c_str());
  auto& f = Fixture::get();
  static ktune_runtime* rt = [] {
    ktune_runtime* r = nullptr;
    if (ktune_runtime_create(nullptr, &r) != KTUNE_OK)
      std::fprintf(stderr, "%s\n", ktune_runtime_last_error());
    return r;
  }();
  if (rt == nullptr) return state.SkipWithError("ktune_runtime_create failed");
  ktune_gemm_args g;
  ktune_gemm_args_init(&g);
  g.a = f.gemm.a;
  g.b = f.gemm.b;
  g.c = f.gemm.c;
  g.m = kM;
  g.n = kN;
  g.k = kK;
  if (ktune_runtime_prepare_gemm(rt, &g, nullptr) != KTUNE_OK)
    return state.SkipWithError(ktune_runtime_last_error());
  launch_loop(state, f.stream, [&] { ktune_runtime_gemm(rt, &g, f.stream); });
}
BENCHMARK(BM_CAbiGemmLaunch);

/// Runtime::rmsnorm on a prepared key: D8 checks, the plan lookup, the caller's eps, the launch.
void BM_RuntimeRmsNormLaunch(benchmark::State& state) {
  if (const auto why = no_device(); !why.empty()) return state.SkipWithError(why.c_str());
  auto& f = Fixture::get();
  launch_loop(state, f.stream, [&] { f.rt->rmsnorm(f.norm, reinterpret_cast<ktune::Stream>(f.stream)); });
}
BENCHMARK(BM_RuntimeRmsNormLaunch);

/// The same rmsnorm config launched with cuLaunchKernel directly: the floor.
void BM_DirectRmsNormLaunch(benchmark::State& state) {
  namespace kt = ktune::kernel_templates;
  if (const auto why = no_device(); !why.empty()) return state.SkipWithError(why.c_str());
  auto& f = Fixture::get();
  const kt::Problem p{{{"rows", kRows}, {"hidden", kHidden}}, ktune::DType::kBF16, ""};
  const kt::KernelSpec& spec = kt::find_spec("rmsnorm", "rowwise");
  const ktune::Config config = spec.default_config(p);
  ktune::harness::NvrtcCompiler compiler;
  const auto compiled = compiler.compile(kt::make_compile_request(
      spec.compile_spec(p, config), kt::SourceLibrary::builtin(), ktune::harness::query_device(0).arch()));
  const kt::LaunchPlan plan = spec.launch_plan(p, config);
  const auto& launch = plan.launches.front();
  auto module = ktune::harness::Module::load(compiled.cubin);
  CUfunction fn = module.function(compiled.lowered_names.at(launch.name_expression));
  CUdeviceptr x = f.x->get(), none = 0, w = f.w->get(), y = f.y->get();
  int rows = kRows, hidden = kHidden;
  float eps = kEps;
  void* args[] = {&x, &none, &w, &y, &none, &rows, &hidden, &eps};  // rmsnorm.cu's signature
  const auto& d = ktune::harness::driver();
  launch_loop(state, f.stream, [&] {
    d.cuLaunchKernel(fn, launch.dims.grid.x, launch.dims.grid.y, launch.dims.grid.z, launch.dims.block.x, 1,
                     1, launch.dims.dynamic_smem_bytes, f.stream, args, nullptr);
  });
}
BENCHMARK(BM_DirectRmsNormLaunch);

}  // namespace

BENCHMARK_MAIN();
