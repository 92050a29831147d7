#include "runtime/detail/plan_launcher.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "ktune/error.hpp"

namespace ktune::runtime::detail {
namespace {

namespace kt = kernel_templates;

std::string slot_list(std::span<const std::string> slots) {
  std::string out;
  for (const auto& s : slots) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool holds(const ScalarBinding& b, const kt::ArgSpec& a) {
  if (std::isnan(b.spec_value)) {  // kAnyValue: the kind only
    return a.kind ==
           (b.kind == ScalarBinding::Kind::kF32 ? kt::ArgSpec::Kind::kF32 : kt::ArgSpec::Kind::kI32);
  }
  if (b.kind == ScalarBinding::Kind::kF32)
    return a.kind == kt::ArgSpec::Kind::kF32 && a.real == static_cast<float>(b.spec_value);
  return a.kind == kt::ArgSpec::Kind::kI32 && static_cast<double>(a.integer) == b.spec_value;
}

/// The scalar binding that takes argument `ai` of launch `li`, or null. A positional binding
/// whose argument does not hold the spec's value throws kRuntime: the spec's arguments moved.
const ScalarBinding* scalar_at(std::span<const ScalarBinding> scalars, std::size_t li, std::size_t ai,
                               const kt::ArgSpec& a, const std::string& kernel) {
  for (const ScalarBinding& b : scalars) {
    if (b.arg == ScalarBinding::kByValue) {
      if (holds(b, a)) return &b;
      continue;
    }
    if ((b.launch != ScalarBinding::kEveryLaunch && b.launch != li) || b.arg != ai) continue;
    if (!holds(b, a)) {
      throw Error(
          ErrorKind::kRuntime,
          fmt::format("dispatch: argument {} of '{}' is not the {} {} the runtime replaces with the "
                      "caller's value (the spec's arguments changed)",
                      b.arg, kernel, b.kind == ScalarBinding::Kind::kF32 ? "f32" : "i32", b.spec_value));
    }
    return &b;
  }
  return nullptr;
}

/// The row-stride binding of `tensor`, or null.
const RowStrideBinding* stride_of(std::span<const RowStrideBinding> row_strides, const std::string& tensor) {
  for (const RowStrideBinding& r : row_strides) {
    if (r.tensor == tensor) return &r;
  }
  return nullptr;
}

/// Every tensor of `row_strides` that `launch` addresses through a pointer must come with its
/// stride: a kernel that took the pointer alone would treat a strided view as contiguous.
void require_strides(const kt::KernelLaunch& launch, std::span<const RowStrideBinding> row_strides) {
  for (const kt::ArgSpec& a : launch.args) {
    if (a.kind != kt::ArgSpec::Kind::kTensor || stride_of(row_strides, a.tensor) == nullptr) continue;
    const bool strided = std::any_of(launch.args.begin(), launch.args.end(), [&](const kt::ArgSpec& s) {
      return s.kind == kt::ArgSpec::Kind::kRowStride && s.tensor == a.tensor;
    });
    if (!strided) {
      throw Error(ErrorKind::kRuntime,
                  fmt::format("dispatch: kernel '{}' takes tensor '{}' without its row stride, so it "
                              "cannot serve a strided view (the spec's arguments changed)",
                              launch.name_expression, a.tensor));
    }
  }
}

}  // namespace

int PlanLauncher::misaligned_stride(std::span<const double> scalars) const {
  for (std::size_t i = 0; i < slot_align.size(); ++i) {
    const SlotStride& s = slot_stride[i];
    if (slot_align[i] == 0 || s.scalar < 0) continue;
    const auto row_bytes =
        static_cast<int64_t>(scalars[static_cast<std::size_t>(s.scalar)]) * s.element_bytes;
    if (row_bytes % slot_align[i] != 0) return static_cast<int>(i);
  }
  return -1;
}

int PlanLauncher::misaligned_slot(std::span<const void* const> slots, std::span<const double> scalars) const {
  for (std::size_t i = 0; i < slots.size() && i < slot_align.size(); ++i) {
    const auto need = static_cast<uintptr_t>(slot_align[i]);
    if (need != 0 && reinterpret_cast<uintptr_t>(slots[i]) % need != 0) return static_cast<int>(i);
  }
  return misaligned_stride(scalars);
}

PlanLauncher bind_plan(const kt::LaunchPlan& plan, const std::vector<kt::AlignmentRule>& alignment,
                       std::span<const std::string> slots, std::span<const ScalarBinding> scalars,
                       std::span<const RowStrideBinding> row_strides) {
  PlanLauncher l;
  l.slot_align.assign(slots.size(), 0);
  l.slot_stride.assign(slots.size(), SlotStride{});
  l.slot_used.assign(slots.size(), false);
  l.scalar_count = scalars.size();
  for (const RowStrideBinding& r : row_strides) l.scalar_count = std::max(l.scalar_count, r.index + 1);
  std::map<std::string, LaunchArg, std::less<>> tensors;
  for (std::size_t i = 0; i < slots.size(); ++i)
    tensors[slots[i]] = {LaunchArg::Kind::kSlot, static_cast<int64_t>(i), 0};
  for (const kt::TensorSpec& t : plan.tensors) {
    if (t.role != kt::TensorRole::kWorkspace) continue;
    tensors[t.name] = {LaunchArg::Kind::kWorkspace, static_cast<int64_t>(l.workspace_bytes), 0};
    const auto bytes = static_cast<std::size_t>(t.bytes());
    l.workspace_bytes += (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
  }
  auto find = [&](const std::string& name) {
    const auto it = tensors.find(name);
    if (it == tensors.end()) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("the dispatch runtime cannot bind tensor '{}' (it knows {} and the plan's "
                              "workspace): the config needs an input this entry point does not take",
                              name, slot_list(slots)));
    }
    return it->second;
  };
  for (const kt::TensorSpec& t : plan.tensors) find(t.name);
  for (const RowStrideBinding& r : row_strides) {
    const auto slot = std::find(slots.begin(), slots.end(), r.tensor);
    if (slot == slots.end()) {
      throw Error(ErrorKind::kBadInput, fmt::format("the dispatch runtime has no slot '{}' for a row stride "
                                                    "(it knows {})",
                                                    r.tensor, slot_list(slots)));
    }
    const auto i = static_cast<std::size_t>(slot - slots.begin());
    const int ti = [&] {
      for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
        if (plan.tensors[t].name == r.tensor) return static_cast<int>(t);
      }
      return -1;
    }();
    if (ti < 0) continue;  // a tensor this plan does not use (e.g. no bias)
    l.slot_stride[i] = {static_cast<int64_t>(r.index),
                        static_cast<int64_t>(size_of(plan.tensors[static_cast<std::size_t>(ti)].dtype))};
  }
  for (const kt::AlignmentRule& rule : alignment) {
    if (!rule.required) continue;
    const LaunchArg a = find(rule.tensor);
    if (a.kind != LaunchArg::Kind::kSlot) continue;  // workspace tensors sit at kWorkspaceAlign
    auto& need = l.slot_align[static_cast<std::size_t>(a.integer)];
    need = std::max(need, rule.bytes);
  }
  std::vector<int> matched(scalars.size(), 0);
  for (std::size_t li = 0; li < plan.launches.size(); ++li) {
    const kt::KernelLaunch& launch = plan.launches[li];
    if (launch.args.size() > kMaxLaunchArgs)
      throw Error(ErrorKind::kBadInput, "kernel '" + launch.name_expression + "' has too many arguments");
    LaunchStep s;
    s.name_expression = launch.name_expression;
    s.grid[0] = launch.dims.grid.x;
    s.grid[1] = launch.dims.grid.y;
    s.grid[2] = launch.dims.grid.z;
    s.block[0] = launch.dims.block.x;
    s.block[1] = launch.dims.block.y;
    s.block[2] = launch.dims.block.z;
    s.smem_bytes = launch.dims.dynamic_smem_bytes;
    require_strides(launch, row_strides);
    for (std::size_t ai = 0; ai < launch.args.size(); ++ai) {
      const kt::ArgSpec& a = launch.args[ai];
      if (const ScalarBinding* b = scalar_at(scalars, li, ai, a, launch.name_expression)) {
        const bool f32 = b->kind == ScalarBinding::Kind::kF32;
        s.args.push_back({f32 ? LaunchArg::Kind::kScalarF32 : LaunchArg::Kind::kScalarI32,
                          static_cast<int64_t>(b->index), 0});
        ++matched[static_cast<std::size_t>(b - scalars.data())];
        continue;
      }
      switch (a.kind) {
        case kt::ArgSpec::Kind::kTensor: {
          const LaunchArg bound = find(a.tensor);
          if (bound.kind == LaunchArg::Kind::kSlot)
            l.slot_used[static_cast<std::size_t>(bound.integer)] = true;
          s.args.push_back(bound);
          break;
        }
        case kt::ArgSpec::Kind::kNullPointer:
          s.args.push_back({LaunchArg::Kind::kNull, 0, 0});
          break;
        case kt::ArgSpec::Kind::kI32:
          s.args.push_back({LaunchArg::Kind::kI32, a.integer, 0});
          break;
        case kt::ArgSpec::Kind::kI64:
          s.args.push_back({LaunchArg::Kind::kI64, a.integer, 0});
          break;
        case kt::ArgSpec::Kind::kF32:
          s.args.push_back({LaunchArg::Kind::kF32, 0, a.real});
          break;
        case kt::ArgSpec::Kind::kRowStride:
          // The caller's stride when the runtime takes one for this tensor, else the spec's
          // contiguous stride (an operator whose callers pass contiguous tensors only).
          if (const RowStrideBinding* r = stride_of(row_strides, a.tensor)) {
            s.args.push_back({LaunchArg::Kind::kScalarI32, static_cast<int64_t>(r->index), 0});
          } else {
            s.args.push_back({LaunchArg::Kind::kI32, a.integer, 0});
          }
          break;
        case kt::ArgSpec::Kind::kTensorMap: {
          const LaunchArg bound = find(a.tensor);
          if (bound.kind != LaunchArg::Kind::kSlot) {
            throw Error(ErrorKind::kBadInput, "kernel '" + launch.name_expression +
                                                  "' takes the tensor map of '" + a.tensor +
                                                  "', which is not a caller's tensor");
          }
          l.slot_used[static_cast<std::size_t>(bound.integer)] = true;
          const auto& t = plan.tensors.at(static_cast<std::size_t>(plan.tensor_index(a.tensor)));
          LaunchArg m{LaunchArg::Kind::kTensorMap, bound.integer, 0};
          m.map = harness::tensor_map_2d(t.dtype, a.map, a.integer);
          if (const RowStrideBinding* r = stride_of(row_strides, a.tensor))
            m.stride_scalar = static_cast<int64_t>(r->index);
          // Checked with the spec's (contiguous) stride here; a caller's stride that a map cannot
          // take is caught by the required alignment (PlanLauncher::misaligned_slot) before a launch.
          if (const std::string why = harness::tensor_map_rejection(m.map); !why.empty())
            throw Error(ErrorKind::kBadInput, "kernel '" + launch.name_expression + "': " + why);
          s.args.push_back(m);
          break;
        }
      }
    }
    l.steps.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    if (matched[i] == 0) {
      throw Error(
          ErrorKind::kRuntime,
          fmt::format("dispatch: no argument of the plan holds the spec's {} that the caller's scalar {} "
                      "replaces (the spec's arguments changed)",
                      scalars[i].spec_value, scalars[i].index));
    }
  }
  return l;
}

void resolve_functions(PlanLauncher& l, const harness::CompileResult& compiled,
                       const harness::Module& module) {
  for (LaunchStep& s : l.steps) {
    const auto lowered = compiled.lowered_names.find(s.name_expression);
    if (lowered == compiled.lowered_names.end())
      throw Error(ErrorKind::kRuntime, "compiled module lacks '" + s.name_expression + "'");
    s.function = module.function(lowered->second);
    harness::prepare_function(s.function, s.smem_bytes);
  }
}

void launch_plan(const PlanLauncher& l, std::span<const CUdeviceptr> slots, CUdeviceptr workspace,
                 std::span<const double> scalars, CUstream stream) {
  const harness::DriverApi& d = harness::driver();
  for (const LaunchStep& s : l.steps) {
    std::array<uint64_t, kMaxLaunchArgs> values;
    std::array<void*, kMaxLaunchArgs> params;
    std::array<CUtensorMap, kMaxTensorMaps> maps;  // CUtensorMap is 64-byte aligned
    std::size_t used_maps = 0;
    for (std::size_t i = 0; i < s.args.size(); ++i) {
      const LaunchArg& arg = s.args[i];
      if (arg.kind == LaunchArg::Kind::kTensorMap) {
        if (used_maps == maps.size()) throw Error(ErrorKind::kBadInput, "too many tensor-map arguments");
        harness::TensorMap2d map = arg.map;
        if (arg.stride_scalar >= 0)
          map.row_stride = static_cast<uint64_t>(scalars[static_cast<std::size_t>(arg.stride_scalar)]);
        maps[used_maps] = harness::encode_tensor_map(map, slots[static_cast<std::size_t>(arg.integer)]);
        params[i] = &maps[used_maps++];
        continue;
      }
      uint64_t v = 0;
      switch (arg.kind) {
        case LaunchArg::Kind::kSlot:
          v = slots[static_cast<std::size_t>(arg.integer)];
          break;
        case LaunchArg::Kind::kWorkspace:
          v = workspace + static_cast<uint64_t>(arg.integer);
          break;
        case LaunchArg::Kind::kNull:
          break;
        case LaunchArg::Kind::kI32:
        case LaunchArg::Kind::kScalarI32: {
          const auto x = static_cast<int32_t>(
              arg.kind == LaunchArg::Kind::kI32
                  ? arg.integer
                  : static_cast<int64_t>(scalars[static_cast<std::size_t>(arg.integer)]));
          std::memcpy(&v, &x, sizeof x);
          break;
        }
        case LaunchArg::Kind::kI64:
          v = static_cast<uint64_t>(arg.integer);
          break;
        case LaunchArg::Kind::kF32:
        case LaunchArg::Kind::kScalarF32: {
          const float x = arg.kind == LaunchArg::Kind::kF32
                              ? arg.real
                              : static_cast<float>(scalars[static_cast<std::size_t>(arg.integer)]);
          std::memcpy(&v, &x, sizeof x);
          break;
        }
        case LaunchArg::Kind::kTensorMap:
          break;  // handled above
      }
      values[i] = v;
      params[i] = &values[i];
    }
    KTUNE_CU_CHECK(d.cuLaunchKernel(s.function, s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1],
                                    s.block[2], s.smem_bytes, stream, params.data(), nullptr));
  }
}

}  // namespace ktune::runtime::detail
