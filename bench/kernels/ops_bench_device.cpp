#include "ops_bench_device.hpp"

#include <algorithm>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "ktune/error.hpp"
#include "measure/gpu_compare.hpp"
#include "measure/random_fill.hpp"
#include "measure/tolerance.hpp"
#include "ops_gpu_support.hpp"

namespace ktune::kernel_templates::testing {

void ReadyPlan::enqueue(CUstream stream) const {
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const auto& d = launches[i].dims;
    harness::launch(functions[i], {d.grid.x, d.grid.y, d.grid.z}, {d.block.x, d.block.y, d.block.z},
                    d.dynamic_smem_bytes, stream, args[i]->data());
  }
}

ReadyPlan prepare_plan(KernelCache& kernels, const CompileSpec& compile, const LaunchPlan& plan,
                       const DeviceTensors& tensors) {
  std::vector<uint64_t> ptrs;
  for (const auto& t : plan.tensors) ptrs.push_back(tensors.ptr(t.name));
  ReadyPlan r;
  for (const auto& l : plan.launches) {
    CUfunction f = kernels.function(compile, l.name_expression);
    harness::prepare_function(f, l.dims.dynamic_smem_bytes);
    r.functions.push_back(f);
    r.launches.push_back(l);
    r.args.push_back(std::make_unique<PackedArgs>(plan, l, ptrs));
  }
  return r;
}

void fill_inputs_on_device(const Problem& problem, const std::vector<TensorSpec>& tensors,
                           DeviceTensors& device, const measure::UtilityKernels& utility, uint64_t seed,
                           CUstream stream) {
  std::vector<TensorSpec> special;
  for (const TensorSpec& t : tensors) {
    if (t.role == TensorRole::kInput && (is_int32_tensor(t.name) || t.name == "cos_sin")) {
      special.push_back(t);
      continue;
    }
    device.ensure(t);
    if (t.role != TensorRole::kInput) {
      device.poison(t.name);
    } else {
      measure::random_fill(utility, device.ptr(t.name), t.dtype, static_cast<uint64_t>(t.elements), seed++,
                           1.0f, stream);
    }
  }
  HostTensors ignored;
  fill_inputs(problem, special, device, ignored, seed);
  // The poison memsets went to the legacy default stream, the fills to `stream`: wait for both.
  KTUNE_CU_CHECK(harness::driver().cuCtxSynchronize());
}

measure::Verdict verify_on_device(const DeviceTensors& device, const LaunchPlan& plan, const std::string& out,
                                  const LaunchPlan& ref_plan, const std::string& ref, DType dtype,
                                  const measure::UtilityKernels& utility, CUstream stream) {
  const TensorSpec& o = plan.tensors[static_cast<std::size_t>(plan.tensor_index(out))];
  const TensorSpec& r = ref_plan.tensors[static_cast<std::size_t>(ref_plan.tensor_index(ref))];
  const measure::ErrorMetrics m = measure::gpu_compare(utility, device.ptr(out), o.dtype, device.ptr(ref),
                                                       r.dtype, static_cast<uint64_t>(o.elements), stream);
  return measure::judge(m, measure::tolerance_for(dtype));
}

}  // namespace ktune::kernel_templates::testing
