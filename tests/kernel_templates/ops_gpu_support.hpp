#pragma once
// GPU-side helpers shared by the operators' gpu suite and their benchmark: inputs of a problem
// (random values; the int32 tensors "positions" and "lengths" get random integers, including
// negative and out-of-range ones that the kernels wrap; "cos_sin" gets a real rotary table), and
// the reference outputs of a problem.

#include <cstdint>
#include <string>
#include <vector>

#include "gpu_plan_runner.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates::testing {

/// Whether tensor `name` holds int32 values (declared f32: ktune::DType has no integer type).
bool is_int32_tensor(const std::string& name);

/// Allocates and fills every input tensor of `tensors` (each but cos_sin and the int32 ones
/// `offset_bytes` past its allocation's 16-byte alignment) and records its values in `host` (int32
/// tensors as their integer values);
/// allocates and poisons every other tensor. Positions are in [-3, 3 * kMaxPos) (rmsnorm_rope),
/// lengths in [0, cols + 2] with one -1 (softmax; both wrap in the kernels).
void fill_inputs(const Problem& problem, const std::vector<TensorSpec>& tensors, DeviceTensors& device,
                 HostTensors& host, uint64_t seed, std::size_t offset_bytes = 0);

/// Downloads tensor `spec` and decodes it to doubles.
std::vector<double> download_values(const DeviceTensors& device, const TensorSpec& spec);

}  // namespace ktune::kernel_templates::testing
