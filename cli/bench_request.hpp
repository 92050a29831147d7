#pragma once
/// The worker request `ktune bench` times for one template config: the config and the kernel's GPU
/// reference compiled with NVRTC, every launch of the plan as one sequence, the buffers by name,
/// the output checks (none with --no-verify), FLOPs and minimum bytes for TFLOP/s and GB/s.

#include <string>

#include "cli/bench_target.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "measure/candidate.hpp"
#include "measure/timing_options.hpp"

namespace ktune::cli {

/// The request for `config` on `target`, compiled for `arch` (e.g. "sm_90"). Throws what the
/// compiler throws: ktune::Error(kRuntime, NVRTC_ERROR_COMPILATION, detail = the log) for a config
/// that does not compile, kNoDevice when NVRTC cannot be opened; kBadInput for a rejected config.
measure::CandidateRequest make_bench_request(const BenchTarget& target, const BenchConfig& config,
                                             const std::string& arch, const measure::TimingOptions& timing,
                                             int device, bool verify, harness::NvrtcCompiler& compiler,
                                             const kernel_templates::SourceLibrary& sources);

/// The request for a library algorithm (a cuBLASLt config, e.g. the cached winner of a key the
/// library won): the same timing path as a template's, verified against the kernel's GPU reference
/// (compiled for `arch`) as the tuning loop verifies it.
measure::CandidateRequest make_library_bench_request(const BenchTarget& target,
                                                     const ktune::Config& algorithm, const std::string& arch,
                                                     const measure::TimingOptions& timing, int device,
                                                     bool verify, harness::NvrtcCompiler& compiler,
                                                     const kernel_templates::SourceLibrary& sources);

}  // namespace ktune::cli
