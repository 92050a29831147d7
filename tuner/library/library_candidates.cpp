#include "tuner/library/library_candidates.hpp"

#include <fmt/format.h>

#include "harness/cublaslt_algorithm.hpp"
#include "harness/cublaslt_layout.hpp"
#include "kernel_templates/candidate_builder.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/library_call.hpp"

namespace ktune::tuner {

namespace kt = kernel_templates;

bool library_serves(std::string_view kernel, const kt::Problem& problem) {
  if (kernel == "fp8_gemm") {
    // cuBLASLt's fp8 rule: K and N (its leading dimensions) multiples of 16; per-tensor scales.
    return problem.dtype == DType::kFP8E4M3 && problem.layout == "nt" && problem.dim("k") % 16 == 0 &&
           problem.dim("n") % 16 == 0;
  }
  const bool dtype_ok =
      problem.dtype == DType::kBF16 || problem.dtype == DType::kF16 || problem.dtype == DType::kF32;
  // Plain and biased layouts: cuBLASLt's bias epilogue serves "+bias"; it has no SiLU.
  return kernel == "gemm" && dtype_ok && harness::is_library_gemm_layout(problem.layout);
}

std::string library_canonical_name(std::string_view kernel, const kt::Problem& problem,
                                   const Config& config) {
  const harness::CublasLtAlgorithm a = harness::CublasLtAlgorithm::from_config(config);
  return fmt::format("{}.{}.{}.{}.{}", kernel, to_string(problem.dtype), problem.layout,
                     harness::CublasLtAlgorithm::kVariant, a.name_suffix());
}

const kt::KernelSpec& library_reference_spec(std::string_view kernel, const kt::Problem& problem) {
  for (const kt::KernelSpec* spec : kt::specs_of(kernel)) {
    if (!spec->rejection(problem, spec->default_config(problem))) return *spec;
  }
  throw Error(ErrorKind::kBadInput,
              fmt::format("no template of '{}' serves {} {} {} to verify a library candidate against", kernel,
                          problem.shape_text(), to_string(problem.dtype), problem.layout));
}

measure::CandidateRequest library_candidate_request(std::string_view kernel, const kt::Problem& problem,
                                                    const Config& config,
                                                    const harness::CompileResult& reference_compiled) {
  if (!library_serves(kernel, problem)) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("no library algorithm serves {} {} {} {}", kernel, problem.shape_text(),
                            to_string(problem.dtype), problem.layout));
  }
  const kt::KernelSpec& spec = library_reference_spec(kernel, problem);
  const kt::ReferenceSpec ref = spec.reference(problem);
  measure::LibraryGemmCall call;
  call.fp8 = kernel == "fp8_gemm";
  call.dtype = problem.dtype;
  call.layout = problem.layout;
  call.m = problem.dim("m");
  call.n = problem.dim("n");
  call.k = problem.dim("k");
  call.algorithm = config;

  measure::CandidateRequest r;
  r.name = library_canonical_name(kernel, problem, config);
  for (const kt::TensorSpec& t : ref.plan.tensors) {
    measure::BufferSpec b;
    b.name = t.name;
    b.dtype = t.dtype;
    b.count = static_cast<uint64_t>(t.elements);
    b.init = t.role == kt::TensorRole::kInput ? measure::BufferSpec::Init::kFill
                                              : measure::BufferSpec::Init::kPoison;
    r.buffers.push_back(std::move(b));
  }
  measure::BufferSpec c;
  c.name = call.c;
  c.dtype = call.fp8 ? DType::kBF16 : problem.dtype;  // fp8_gemm writes bf16
  c.count = static_cast<uint64_t>(call.m * call.n);
  c.init = measure::BufferSpec::Init::kPoison;
  r.buffers.push_back(std::move(c));
  r.launches = {measure::library_launch(call)};
  r.reference = kt::to_launch_spec(ref.plan, ref.plan.launches.at(0), reference_compiled);
  for (const auto& [out, expected] : ref.compare) r.checks.push_back({out, expected});
  const kt::WorkCounts w = spec.work(problem);
  r.flops = w.flops;
  r.bytes_moved = w.min_bytes;
  return r;
}

}  // namespace ktune::tuner
