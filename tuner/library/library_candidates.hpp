#pragma once
/// A vendor library's algorithms as candidates of a key (D3; what PyTorch TunableOp does): for a
/// gemm or fp8_gemm key the library serves (library_serves), the best N algorithms cuBLASLt's
/// heuristic offers (and split-K variants of its best two, harness::CublasLtSession::candidates)
/// are verified and timed in the worker exactly like the templates' configs,
/// stored under canonical names that carry the library version
/// (`gemm.bf16.nt.cublaslt.v130100.a66.t23.s19.k1.r0.w0.c0.i0.x0`), re-timed with the contenders
/// and may win; the runtime then dispatches the winner through cuBLASLt. A new library version
/// names other configs, so the old ones are stale, not wrong answers. N comes from the space
/// (`library_algorithms`), `ktune tune --library-algorithms` overrides it.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/kernel_spec.hpp"
#include "measure/candidate.hpp"

namespace ktune::tuner {

/// Whether a vendor library has algorithms for this key: gemm (f16, bf16 or f32; layout nt or nn),
/// fp8_gemm (e4m3, mode nt: per-tensor scales; N and K multiples of 16).
bool library_serves(std::string_view kernel, const kernel_templates::Problem& problem);

/// "gemm.bf16.nt.cublaslt.v130100.a66.t23.s19.k1.r0.w0.c0.i0.x0". Throws ktune::Error(kBadInput)
/// for a config that is no library algorithm.
std::string library_canonical_name(std::string_view kernel, const kernel_templates::Problem& problem,
                                   const Config& config);

/// The candidate of library config `config` for the key: the library call on buffers a, b, c, the
/// kernel's GPU reference (compiled: `reference_compiled`), the check of c against it, the key's
/// FLOPs and bytes. Throws ktune::Error(kBadInput) for a key the library does not serve.
measure::CandidateRequest library_candidate_request(std::string_view kernel,
                                                    const kernel_templates::Problem& problem,
                                                    const Config& config,
                                                    const harness::CompileResult& reference_compiled);

/// The spec whose GPU reference verifies library candidates of the key (the family's first template
/// that serves the problem with its default config).
const kernel_templates::KernelSpec& library_reference_spec(std::string_view kernel,
                                                           const kernel_templates::Problem& problem);

/// Where a key's library algorithms come from (an in-process query of the library, or a fake in
/// tests).
class LibraryAlgorithms {
 public:
  virtual ~LibraryAlgorithms() = default;
  /// The best `count` algorithms for the key as configs, best first; empty when the library serves
  /// none. Throws ktune::Error(kNoDevice) when the library or the GPU is missing.
  virtual std::vector<Config> configs(std::string_view kernel, const kernel_templates::Problem& problem,
                                      std::size_t count) = 0;
};

}  // namespace ktune::tuner
