#include "cli/bench_request.hpp"

#include <utility>

#include "kernel_templates/candidate_builder.hpp"
#include "kernel_templates/compile_request.hpp"
#include "tuner/library/library_candidates.hpp"

namespace ktune::cli {
namespace {

/// The device and timing of the call; without verification, no reference and no checks.
measure::CandidateRequest finished(measure::CandidateRequest r, int device,
                                   const measure::TimingOptions& timing, bool verify) {
  r.device = device;
  r.timing = timing;
  if (!verify) {
    r.checks.clear();
    r.reference.reset();
  }
  return r;
}

}  // namespace

measure::CandidateRequest make_bench_request(const BenchTarget& target, const BenchConfig& config,
                                             const std::string& arch, const measure::TimingOptions& timing,
                                             int device, bool verify, harness::NvrtcCompiler& compiler,
                                             const kernel_templates::SourceLibrary& sources) {
  namespace kt = kernel_templates;
  const harness::CompileResult compiled = compiler.compile(
      kt::make_compile_request(config.spec->compile_spec(target.problem, config.config), sources, arch));
  // A user kernel described with `verify = false` has no reference: it is timed unverified; one
  // whose reference is saved outputs has nothing to compile.
  const kt::CompileSpec reference_spec =
      config.spec->verifies() ? config.spec->reference(target.problem).compile : kt::CompileSpec{};
  const harness::CompileResult reference =
      reference_spec.name_expressions.empty()
          ? harness::CompileResult{}
          : compiler.compile(kt::make_compile_request(reference_spec, sources, arch));
  const kt::CandidateParts parts =
      kt::make_candidate_parts(*config.spec, target.problem, config.config, compiled, reference);
  measure::CandidateRequest r = kt::make_candidate_request(parts);
  r.name = config.name;
  return finished(std::move(r), device, timing, verify);
}

measure::CandidateRequest make_library_bench_request(const BenchTarget& target,
                                                     const ktune::Config& algorithm, const std::string& arch,
                                                     const measure::TimingOptions& timing, int device,
                                                     bool verify, harness::NvrtcCompiler& compiler,
                                                     const kernel_templates::SourceLibrary& sources) {
  namespace kt = kernel_templates;
  const std::string& kernel = target.kernel->name;
  const kt::KernelSpec& spec = tuner::library_reference_spec(kernel, target.problem);
  const harness::CompileResult reference =
      compiler.compile(kt::make_compile_request(spec.reference(target.problem).compile, sources, arch));
  measure::CandidateRequest r =
      tuner::library_candidate_request(kernel, target.problem, algorithm, reference);
  return finished(std::move(r), device, timing, verify);
}

}  // namespace ktune::cli
