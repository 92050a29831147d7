#include "gemm_gpu_fixture.hpp"

#include <span>

#include "core/dtype.hpp"
#include "harness/device_info.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates::testing {
namespace {

/// Uploads each input (`input(tensor)` gives its bytes) at `offset`, poisons the rest, runs the
/// reference and keeps "c_ref".
template <typename Input>
void reference_with(const KernelSpec& spec, KernelCache& kernels, GemmFixture& f, std::size_t offset,
                    Input&& input) {
  const ReferenceSpec ref = spec.reference(f.problem);
  for (const auto& t : ref.plan.tensors) {
    f.tensors.ensure(t, t.role == TensorRole::kInput ? offset : 0);
    if (t.role == TensorRole::kInput) {
      f.tensors.upload(t.name, input(t));
    } else {
      f.tensors.poison(t.name);
    }
  }
  run_plan(kernels, ref.compile, ref.plan, f.tensors);
  const auto& c_ref = ref.plan.tensors[static_cast<std::size_t>(ref.plan.tensor_index("c_ref"))];
  const auto raw = f.tensors.download("c_ref", static_cast<std::size_t>(c_ref.bytes()));
  f.c_ref = ktune::decode(DType::kF32, std::as_bytes(std::span(raw)));
}

}  // namespace

std::unique_ptr<GemmFixture> make_random_fixture(const KernelSpec& spec, KernelCache& kernels,
                                                 const Problem& problem, uint64_t seed, bool misalign) {
  auto f = std::make_unique<GemmFixture>();
  f->problem = problem;
  const std::size_t offset = misalign ? ktune::size_of(problem.dtype) : 0;
  reference_with(spec, kernels, *f, offset, [&](const TensorSpec& t) {
    return random_tensor(t.dtype, t.elements, seed++, f->host[t.name]);
  });
  return f;
}

void run_reference(const KernelSpec& spec, KernelCache& kernels, GemmFixture& f,
                   const std::map<std::string, std::vector<uint8_t>>& inputs) {
  reference_with(spec, kernels, f, 0, [&](const TensorSpec& t) { return inputs.at(t.name); });
}

std::vector<uint8_t> run_candidate(const KernelSpec& spec, KernelCache& kernels, GemmFixture& f,
                                   const Config& config) {
  const CompileSpec compile = spec.compile_spec(f.problem, config);
  const LaunchPlan plan = spec.launch_plan(f.problem, config);
  for (const auto& t : plan.tensors) {
    f.tensors.ensure(t);
    if (t.role != TensorRole::kInput) f.tensors.poison(t.name);
  }
  run_plan(kernels, compile, plan, f.tensors);
  const auto& c = plan.tensors[static_cast<std::size_t>(plan.tensor_index("c"))];
  return f.tensors.download("c", static_cast<std::size_t>(c.bytes()));
}

}  // namespace ktune::kernel_templates::testing
