#include "measure/ceilings.hpp"

#include <vector>

#include <fmt/format.h>

#include "harness/context.hpp"
#include "harness/cublas_api.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "ktune/error.hpp"
#include "measure/copy_kernel.hpp"
#include "measure/kernel_timer.hpp"
#include "measure/random_fill.hpp"
#include "measure/statistics.hpp"

namespace ktune::measure {

namespace {
// cuBLASLt picks faster algorithms with a workspace; 64 MiB covers every heuristic choice seen.
constexpr std::size_t kWorkspaceBytes = 64U << 20;

template <class T, class D>
struct Handle {
  T h = nullptr;
  D destroy;
  ~Handle() {
    if (h) destroy(h);
  }
};
}  // namespace

double cublas_gemm_tflops(int ordinal, DType dtype, int n, int warmup, int samples) {
  std::string why;
  const harness::CublasLtApi* api = harness::cublaslt_or_null(&why);
  if (!api) throw Error(ErrorKind::kNoDevice, why);
  if (dtype != DType::kBF16 && dtype != DType::kF16) {
    throw Error(ErrorKind::kBadInput, fmt::format("GEMM ceiling for {} is not measured", to_string(dtype)));
  }
  const cudaDataType_t type = dtype == DType::kBF16 ? CUDA_R_16BF : CUDA_R_16F;
  harness::PrimaryContext context(ordinal);
  const harness::DeviceInfo dev = harness::query_device(ordinal);
  CUstream stream = nullptr;
  KTUNE_CU_CHECK(harness::driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  Handle<CUstream, CUresult (*)(CUstream)> stream_guard{stream, harness::driver().cuStreamDestroy};

  const auto count = static_cast<uint64_t>(n) * static_cast<uint64_t>(n);
  harness::DeviceBuffer a(count * size_of(dtype)), b(count * size_of(dtype)), c(count * size_of(dtype));
  harness::DeviceBuffer workspace(kWorkspaceBytes);
  const UtilityKernels kernels(dev.arch());
  random_fill(kernels, a.get(), dtype, count, 1, 1.0f, stream);
  random_fill(kernels, b.get(), dtype, count, 2, 1.0f, stream);

  Handle<cublasLtHandle_t, decltype(api->cublasLtDestroy)> h{nullptr, api->cublasLtDestroy};
  harness::check_cublas(*api, api->cublasLtCreate(&h.h), "cublasLtCreate");
  Handle<cublasLtMatmulDesc_t, decltype(api->cublasLtMatmulDescDestroy)> desc{nullptr,
                                                                              api->cublasLtMatmulDescDestroy};
  harness::check_cublas(*api, api->cublasLtMatmulDescCreate(&desc.h, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                        "cublasLtMatmulDescCreate");
  using Layout = Handle<cublasLtMatrixLayout_t, decltype(api->cublasLtMatrixLayoutDestroy)>;
  Layout la{nullptr, api->cublasLtMatrixLayoutDestroy}, lb{nullptr, api->cublasLtMatrixLayoutDestroy},
      lc{nullptr, api->cublasLtMatrixLayoutDestroy};
  const auto un = static_cast<uint64_t>(n);
  harness::check_cublas(*api, api->cublasLtMatrixLayoutCreate(&la.h, type, un, un, n),
                        "cublasLtMatrixLayoutCreate(A)");
  harness::check_cublas(*api, api->cublasLtMatrixLayoutCreate(&lb.h, type, un, un, n),
                        "cublasLtMatrixLayoutCreate(B)");
  harness::check_cublas(*api, api->cublasLtMatrixLayoutCreate(&lc.h, type, un, un, n),
                        "cublasLtMatrixLayoutCreate(C)");
  Handle<cublasLtMatmulPreference_t, decltype(api->cublasLtMatmulPreferenceDestroy)> pref{
      nullptr, api->cublasLtMatmulPreferenceDestroy};
  harness::check_cublas(*api, api->cublasLtMatmulPreferenceCreate(&pref.h), "cublasLtMatmulPreferenceCreate");
  const uint64_t ws = kWorkspaceBytes;
  harness::check_cublas(*api,
                        api->cublasLtMatmulPreferenceSetAttribute(
                            pref.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                        "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t heuristic{};
  int returned = 0;
  harness::check_cublas(*api,
                        api->cublasLtMatmulAlgoGetHeuristic(h.h, desc.h, la.h, lb.h, lc.h, lc.h, pref.h, 1,
                                                            &heuristic, &returned),
                        "cublasLtMatmulAlgoGetHeuristic");
  if (returned == 0) throw Error(ErrorKind::kRuntime, "cuBLASLt found no algorithm for the GEMM");

  const float alpha = 1.0f, beta = 0.0f;
  const CUdeviceptr pa = a.get(), pb = b.get(), pc = c.get();
  auto gemm = [&] {
    harness::check_cublas(*api,
                          api->cublasLtMatmul(h.h, desc.h, &alpha, reinterpret_cast<const void*>(pa), la.h,
                                              reinterpret_cast<const void*>(pb), lb.h, &beta,
                                              reinterpret_cast<void*>(pc), lc.h, reinterpret_cast<void*>(pc),
                                              lc.h, &heuristic.algo, reinterpret_cast<void*>(workspace.get()),
                                              kWorkspaceBytes, reinterpret_cast<cudaStream_t>(stream)),
                          "cublasLtMatmul");
  };
  // The one timing path (kernel_timer.hpp), hot: a compute ceiling, the same operands every launch.
  TimingOptions t;
  t.flush = FlushMode::kNone;
  t.warmup_min_launches = warmup;
  t.min_samples = samples;
  FlushPlan plan;
  plan.mode = FlushMode::kNone;
  KernelTimer timer(t, plan, dev.l2_bytes, stream);
  const double median_us = timer.time([&](std::size_t) { gemm(); }).stats.median;
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  return flops / (median_us * 1e-6) / 1e12;
}

nlohmann::json measure_ceilings(int ordinal, CandidateRunner& runner, const CeilingOptions& options) {
  nlohmann::json out = nlohmann::json::object();
  nlohmann::json unavailable = nlohmann::json::object();
  const harness::DeviceInfo dev = harness::query_device(ordinal);

  // The copy ceiling: the fastest of the copy kernel's variants (loads in flight a thread, the
  // evict-first hint, one pass or a grid of four blocks an SM looping over the data).
  double best = 0;
  for (int unroll : {4, 8}) {
    for (bool streaming : {false, true}) {
      for (int64_t grid : {int64_t{0}, int64_t{4} * dev.sm_count}) {
        CopyConfig config;
        config.unroll = unroll;
        config.streaming = streaming;
        config.grid = grid;
        TimingOptions t;
        CandidateRequest r =
            make_copy_request(options.copy_bytes / 4, DType::kF32, config, dev.arch(), t, ordinal);
        const CandidateResult res = runner.run(r);
        if (res.outcome == Outcome::kOk && res.gbps > best) {
          best = res.gbps;
          out["copy_gbps"] = res.gbps;
          out["copy_config"] = res.name;
        } else if (res.outcome != Outcome::kOk) {
          unavailable["copy_gbps"] = fmt::format("{}: {}: {}", res.name, to_string(res.outcome), res.reason);
        }
        out["copy_variants"][res.name] =
            res.outcome == Outcome::kOk ? nlohmann::json(res.gbps) : nlohmann::json();
      }
    }
  }
  if (best > 0) unavailable.erase("copy_gbps");

  out["gemm_size"] = options.gemm_size;
  for (DType d : {DType::kBF16, DType::kF16}) {
    const std::string key = fmt::format("{}_tflops", to_string(d));
    try {
      out[key] = cublas_gemm_tflops(ordinal, d, options.gemm_size, options.gemm_warmup, options.gemm_samples);
    } catch (const Error& e) {
      unavailable[key] = e.what();
    }
  }
  if (!unavailable.empty()) out["unavailable"] = unavailable;
  return out;
}

}  // namespace ktune::measure
