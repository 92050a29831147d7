#pragma once
/// The compile stage of the tuning loop, run on the compile pool's threads: from a proposed config
/// to either an outcome decided before the GPU (skipped by the template's rules or by its target
/// arch (KernelSpec::arch_rejection), compile_error, exceeds_limits, or "compile-only") or a
/// CandidateRequest ready for the worker. Also the mapping from the worker's CandidateResult to the
/// cache's Measurement.

#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "cache/config_cache.hpp"
#include "core/config.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/kernel_spec.hpp"
#include "measure/candidate.hpp"
#include "measure/timing_options.hpp"
#include "tuner/space/problem_context.hpp"
#include "tuner/space/resource_limits.hpp"

namespace ktune::tuner::detail {

/// What every candidate of one key shares. Held by shared_ptr: pool tasks may outlive a key that
/// was abandoned.
struct KeyContext {
  std::string kernel;
  std::string layout;
  std::string shape;  ///< canonical
  kernel_templates::Problem problem;
  DeviceLimits limits;
  std::string arch;
  bool compile_only = false;
  int device = 0;
  measure::TimingOptions timing;
  const kernel_templates::SourceLibrary* sources = nullptr;
  std::function<harness::CompileResult(const harness::CompileRequest&)> compile;

  /// The GPU reference's compile for `spec`'s reference of the problem, compiled once per key by
  /// the first candidate that needs it (the others wait for it). Thread-safe.
  harness::CompileResult reference_for(const kernel_templates::KernelSpec& spec) const;

 private:
  mutable std::mutex reference_mutex_;
  mutable std::map<std::string, std::shared_future<harness::CompileResult>> references_;
};

/// A candidate after the compile stage.
struct Prepared {
  std::optional<cache::Measurement> decided;         ///< outcome known without the GPU
  std::optional<measure::CandidateRequest> request;  ///< else: what the worker measures
  std::string resources_json = "{}";                 ///< registers, shared memory, spills, launches
  Resources resources;                               ///< of the main launch (pick_winner's tie rule)
};

/// The compile stage for `config` (named `name`) at `fidelity`. Throws ktune::Error only for what
/// is not the candidate's fault (the reference does not compile, a source is missing).
Prepared prepare_candidate(const KeyContext& ctx, const Config& config, const std::string& name,
                           double fidelity);

/// The timing options at `fidelity` (a multiplier on the sample cap and the time cap; at least
/// the protocol's minimum number of samples).
measure::TimingOptions scaled_timing(const measure::TimingOptions& timing, double fidelity);

/// A measurement row of `name` for the key, without outcome-specific fields.
cache::Measurement base_measurement(const KeyContext& ctx, const Config& config, const std::string& name);

/// The worker's result as a measurement row (resources: the compile stage's, completed by the
/// worker's).
/// A measured result's outcome, reason, statistics, counters, clock and temperature into `m`; an
/// ok without statistics becomes a launch error that says `who` reported it.
void record_result(cache::Measurement& m, const measure::CandidateResult& result, std::string_view who);

cache::Measurement to_measurement(const KeyContext& ctx, const Config& config, const std::string& name,
                                  const Prepared& prepared, const measure::CandidateResult& result);

}  // namespace ktune::tuner::detail
