#pragma once
/// Measured device ceilings for rooflines and "% of ceiling" columns (`ktune devices --calibrate`):
/// the best copy bandwidth of the built-in copy kernel (through the worker, full protocol) and the
/// cuBLASLt bf16 and f16 GEMM rates (fp32 accumulation) at a large square size, in-process.

#include <cstdint>

#include <nlohmann/json.hpp>

#include "measure/candidate_runner.hpp"

namespace ktune::measure {

struct CeilingOptions {
  /// Bytes per copy buffer: 2 GiB is far past any L2 (the H200's 60 MiB) so DRAM is what is timed.
  uint64_t copy_bytes = 2ULL << 30;
  /// Square GEMM size: 8192^3 reaches ~724 TFLOP/s with cuBLAS bf16 on the H200
  /// (docs/perf/measurement.md), near the plateau.
  int gemm_size = 8192;
  int gemm_warmup = 5;
  int gemm_samples = 20;
};

/// {"copy_gbps":..,"copy_config":..,"bf16_tflops":..,"f16_tflops":..,"gemm_size":..,
///  "unavailable":{"bf16_tflops":"why",...}} — a ceiling that could not be measured is absent
/// from the numbers and listed under "unavailable" with the reason. Throws ktune::Error only when
/// no device can be used at all.
nlohmann::json measure_ceilings(int ordinal, CandidateRunner& runner, const CeilingOptions& options = {});

/// The cuBLASLt GEMM rate in TFLOP/s for an n x n x n GEMM of `dtype` (f16 or bf16, fp32
/// accumulation) on device `ordinal`, timed in this process. Throws ktune::Error with the reason.
double cublas_gemm_tflops(int ordinal, DType dtype, int n, int warmup, int samples);

}  // namespace ktune::measure
