#pragma once
/// From a KernelSpec's plain data to the measurement harness's candidate description
/// (measure/candidate.hpp): buffers by name (inputs random, outputs and workspace poisoned), the
/// plan's whole launch sequence with lowered names and arguments, the GPU reference, the output
/// checks, FLOPs and minimum bytes. A split-K plan is measured as the sequence it is: the GEMM and
/// its reduction (and, for the atomic variant, the launch that zeroes the workspace) run, verify and
/// time together, as dispatch pays for them. The workspace is poisoned once, before the verified
/// run, so a plan that reads workspace none of its launches wrote fails verification.

#include <optional>
#include <string>
#include <vector>

#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/kernel_spec.hpp"
#include "measure/candidate.hpp"

namespace ktune::kernel_templates {

/// Everything a candidate needs, with the candidate's launches as a sequence (a split-K config has
/// two: the GEMM and the reduction; they must be timed together).
struct CandidateParts {
  std::string name;                           ///< canonical config name
  std::vector<measure::BufferSpec> buffers;   ///< the plan's and the reference's tensors, by name
  std::vector<measure::LaunchSpec> launches;  ///< the candidate, in order
  uint32_t main_launch = 0;                   ///< the launch of the config's main kernel (the GEMM)
  /// The GPU reference (one launch); absent for a spec that does not verify (KernelSpec::verifies).
  std::optional<measure::LaunchSpec> reference;
  std::vector<measure::OutputCheck> checks;  ///< candidate output vs reference output; none when unverified
  double flops = 0;
  double min_bytes = 0;
};

/// One launch of `plan` as the harness's LaunchSpec, with the function's lowered name from
/// `compiled`. Throws ktune::Error(kBadInput) when `compiled` lacks the name expression.
measure::LaunchSpec to_launch_spec(const LaunchPlan& plan, const KernelLaunch& launch,
                                   const harness::CompileResult& compiled);

/// The parts of (spec, problem, config). `compiled` is the result of compile_spec(problem, config),
/// `reference_compiled` of reference(problem).compile (ignored, and may be empty, for a spec that
/// does not verify). Throws ktune::Error(kBadInput) when the config is rejected.
CandidateParts make_candidate_parts(const KernelSpec& spec, const Problem& problem, const Config& config,
                                    const harness::CompileResult& compiled,
                                    const harness::CompileResult& reference_compiled);

/// The parts as a measure::CandidateRequest with every launch of the sequence (timing options and
/// device left at their defaults). Throws ktune::Error(kBadInput) for parts without launches.
measure::CandidateRequest make_candidate_request(const CandidateParts& parts);

}  // namespace ktune::kernel_templates
