#pragma once
// What the gpu suites of the GEMM-like templates (mma, wgmma, fp8_gemm) share: a fixture holding a
// problem's inputs on the device with the spec's GPU reference output "c_ref", against which
// candidates' "c" is checked (the device itself: gpu_session(), gpu_plan_runner.hpp).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu_plan_runner.hpp"
#include "harness/context.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates::testing {

/// A problem's device tensors, the host values of its inputs, and the f32 GPU reference output.
struct GemmFixture {
  Problem problem;
  DeviceTensors tensors;
  HostTensors host;
  std::vector<double> c_ref;
};

/// Random inputs (seed, seed + 1, ... in the reference plan's tensor order; each input one element
/// off its 16-byte alignment when `misalign`), then `spec`'s GPU reference.
std::unique_ptr<GemmFixture> make_random_fixture(const KernelSpec& spec, KernelCache& kernels,
                                                 const Problem& problem, uint64_t seed,
                                                 bool misalign = false);

/// Uploads `inputs` (bytes by tensor name; `f.host` is the caller's to fill), then `spec`'s GPU reference.
void run_reference(const KernelSpec& spec, KernelCache& kernels, GemmFixture& f,
                   const std::map<std::string, std::vector<uint8_t>>& inputs);

/// Runs `config`'s plan on the fixture's inputs (outputs poisoned first) and returns the bytes of "c".
std::vector<uint8_t> run_candidate(const KernelSpec& spec, KernelCache& kernels, GemmFixture& f,
                                   const Config& config);

}  // namespace ktune::kernel_templates::testing
