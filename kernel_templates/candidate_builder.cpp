#include "kernel_templates/candidate_builder.hpp"

#include <algorithm>
#include <string>

#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

measure::KernelArg to_kernel_arg(const ArgSpec& a, const LaunchPlan& plan) {
  switch (a.kind) {
    case ArgSpec::Kind::kTensorMap:
      // The measurement path carries contiguous maps only (the tuner measures contiguous tensors).
      if (a.integer != 0 && a.integer != a.map[1]) {
        throw Error(ErrorKind::kBadInput,
                    "candidate '" + a.tensor + "': a strided tensor map cannot be measured (row stride " +
                        std::to_string(a.integer) + ", cols " + std::to_string(a.map[1]) + ")");
      }
      return measure::KernelArg::tensor_map(
          a.tensor, plan.tensors.at(static_cast<std::size_t>(plan.tensor_index(a.tensor))).dtype, a.map[0],
          a.map[1], a.map[2], a.map[3]);
    case ArgSpec::Kind::kTensor:
      return measure::KernelArg::buf(a.tensor);
    case ArgSpec::Kind::kNullPointer:
      return measure::KernelArg::u64(0);
    case ArgSpec::Kind::kI32:
    case ArgSpec::Kind::kRowStride:
      return measure::KernelArg::i32(static_cast<int32_t>(a.integer));
    case ArgSpec::Kind::kI64:
      return measure::KernelArg::i64(a.integer);
    case ArgSpec::Kind::kF32:
      return measure::KernelArg::f32(a.real);
  }
  throw Error(ErrorKind::kBadInput, "unknown ArgSpec kind");
}

void add_buffers(std::vector<measure::BufferSpec>& out, const std::vector<TensorSpec>& tensors) {
  for (const TensorSpec& t : tensors) {
    const bool known = std::any_of(out.begin(), out.end(), [&](const auto& b) { return b.name == t.name; });
    if (known) continue;
    const auto init =
        t.role == TensorRole::kInput ? measure::BufferSpec::Init::kFill : measure::BufferSpec::Init::kPoison;
    measure::BufferSpec b{t.name, t.dtype, static_cast<uint64_t>(t.elements), init, t.fill, t.integer};
    out.push_back(std::move(b));
  }
}

}  // namespace

measure::LaunchSpec to_launch_spec(const LaunchPlan& plan, const KernelLaunch& launch,
                                   const harness::CompileResult& compiled) {
  const auto lowered = compiled.lowered_names.find(launch.name_expression);
  if (lowered == compiled.lowered_names.end()) {
    throw Error(ErrorKind::kBadInput, "compile result has no function for '" + launch.name_expression + "'");
  }
  measure::LaunchSpec l;
  l.cubin = compiled.cubin;
  l.function = lowered->second;
  l.grid = {launch.dims.grid.x, launch.dims.grid.y, launch.dims.grid.z};
  l.block = {launch.dims.block.x, launch.dims.block.y, launch.dims.block.z};
  l.shared_bytes = launch.dims.dynamic_smem_bytes;
  for (const ArgSpec& a : launch.args) l.args.push_back(to_kernel_arg(a, plan));
  return l;
}

CandidateParts make_candidate_parts(const KernelSpec& spec, const Problem& problem, const Config& config,
                                    const harness::CompileResult& compiled,
                                    const harness::CompileResult& reference_compiled) {
  if (auto why = spec.rejection(problem, config)) throw Error(ErrorKind::kBadInput, *why);
  const LaunchPlan plan = spec.launch_plan(problem, config);
  const ReferenceSpec ref = spec.verifies() ? spec.reference(problem) : ReferenceSpec{};
  // No launch: the reference's outputs are saved values, read into their buffers (docs/byo.md).
  if (spec.verifies() && ref.plan.launches.size() > 1) {
    throw Error(ErrorKind::kBadInput, "a reference of more than one launch is not supported");
  }
  CandidateParts parts;
  parts.name = spec.canonical_name(problem, config);
  add_buffers(parts.buffers, plan.tensors);
  add_buffers(parts.buffers, ref.plan.tensors);
  for (const KernelLaunch& l : plan.launches) parts.launches.push_back(to_launch_spec(plan, l, compiled));
  // The main kernel is the compile spec's first name expression (the tuner's rule, too).
  const std::vector<std::string> exprs = spec.compile_spec(problem, config).name_expressions;
  for (std::size_t i = 0; i < plan.launches.size() && !exprs.empty(); ++i) {
    if (plan.launches[i].name_expression == exprs.front()) {
      parts.main_launch = static_cast<uint32_t>(i);
      break;
    }
  }
  if (spec.verifies() && !ref.plan.launches.empty())
    parts.reference = to_launch_spec(ref.plan, ref.plan.launches.front(), reference_compiled);
  for (const auto& [out, expected] : ref.compare) {
    measure::OutputCheck check{out, expected};
    if (const auto rel = ref.rel_tolerance.find(out); rel != ref.rel_tolerance.end())
      check.rel_l2 = rel->second;
    if (const auto abs = ref.abs_tolerance.find(out); abs != ref.abs_tolerance.end()) check.abs = abs->second;
    parts.checks.push_back(std::move(check));
  }
  const WorkCounts w = spec.work(problem);
  parts.flops = w.flops;
  parts.min_bytes = w.min_bytes;
  return parts;
}

measure::CandidateRequest make_candidate_request(const CandidateParts& parts) {
  if (parts.launches.empty() || parts.main_launch >= parts.launches.size()) {
    throw Error(ErrorKind::kBadInput, "candidate '" + parts.name + "' has no launch " +
                                          std::to_string(parts.main_launch) + " (it has " +
                                          std::to_string(parts.launches.size()) + ")");
  }
  measure::CandidateRequest r;
  r.name = parts.name;
  r.buffers = parts.buffers;
  r.launches = parts.launches;
  r.main_launch = parts.main_launch;
  r.reference = parts.reference;
  r.checks = parts.checks;
  r.flops = parts.flops;
  r.bytes_moved = parts.min_bytes;
  return r;
}

}  // namespace ktune::kernel_templates
