#include "tuner/detail/gemm_launcher.hpp"

#include <array>
#include <cstring>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "ktune/error.hpp"

namespace ktune::tuner::detail {
namespace {

/// Dynamic shared memory a kernel may use without opting in (every CUDA GPU).
constexpr unsigned kDefaultDynamicSmem = 48 * 1024;

LaunchArg tensor_arg(const std::string& name) {
  if (name == "a") return {LaunchArg::Kind::kA, 0, 0};
  if (name == "b") return {LaunchArg::Kind::kB, 0, 0};
  if (name == "c") return {LaunchArg::Kind::kC, 0, 0};
  if (name == "workspace") return {LaunchArg::Kind::kWorkspace, 0, 0};
  throw Error(ErrorKind::kBadInput,
              "the dispatch runtime cannot bind tensor '" + name +
                  "' (it knows a, b, c and workspace): the config needs an epilogue input");
}

}  // namespace

GemmLauncher make_gemm_launcher(const kernel_templates::LaunchPlan& plan,
                                const std::vector<kernel_templates::AlignmentRule>& alignment,
                                const harness::CompileResult& compiled, const harness::Module& module) {
  namespace kt = kernel_templates;
  GemmLauncher l;
  for (const auto& t : plan.tensors) {
    if (t.name == "workspace") l.workspace_bytes = static_cast<std::size_t>(t.bytes());
  }
  for (const auto& rule : alignment) {
    if (!rule.required) continue;
    const LaunchArg a = tensor_arg(rule.tensor);
    const int idx = a.kind == LaunchArg::Kind::kA ? 0 : a.kind == LaunchArg::Kind::kB ? 1 : 2;
    l.required_align[idx] = std::max(l.required_align[idx], rule.bytes);
  }
  const harness::DriverApi& d = harness::driver();
  for (const kt::KernelLaunch& launch : plan.launches) {
    auto lowered = compiled.lowered_names.find(launch.name_expression);
    if (lowered == compiled.lowered_names.end())
      throw Error(ErrorKind::kRuntime, "compiled module lacks '" + launch.name_expression + "'");
    if (launch.args.size() > kMaxLaunchArgs)
      throw Error(ErrorKind::kBadInput, "kernel '" + launch.name_expression + "' has too many arguments");
    LaunchStep s;
    s.function = module.function(lowered->second);
    s.grid[0] = launch.dims.grid.x;
    s.grid[1] = launch.dims.grid.y;
    s.grid[2] = launch.dims.grid.z;
    s.block[0] = launch.dims.block.x;
    s.block[1] = launch.dims.block.y;
    s.block[2] = launch.dims.block.z;
    s.smem_bytes = launch.dims.dynamic_smem_bytes;
    if (s.smem_bytes > kDefaultDynamicSmem) {
      KTUNE_CU_CHECK(d.cuFuncSetAttribute(s.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          static_cast<int>(s.smem_bytes)));
    }
    for (const kt::ArgSpec& a : launch.args) {
      switch (a.kind) {
        case kt::ArgSpec::Kind::kTensor:
          s.args.push_back(tensor_arg(a.tensor));
          break;
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
      }
    }
    l.steps.push_back(std::move(s));
  }
  return l;
}

void launch_gemm(const GemmLauncher& l, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr workspace,
                 CUstream stream) {
  const harness::DriverApi& d = harness::driver();
  for (const LaunchStep& s : l.steps) {
    std::array<uint64_t, kMaxLaunchArgs> slots;
    std::array<void*, kMaxLaunchArgs> params;
    for (std::size_t i = 0; i < s.args.size(); ++i) {
      const LaunchArg& arg = s.args[i];
      uint64_t v = 0;
      switch (arg.kind) {
        case LaunchArg::Kind::kA:
          v = a;
          break;
        case LaunchArg::Kind::kB:
          v = b;
          break;
        case LaunchArg::Kind::kC:
          v = c;
          break;
        case LaunchArg::Kind::kWorkspace:
          v = workspace;
          break;
        case LaunchArg::Kind::kNull:
          v = 0;
          break;
        case LaunchArg::Kind::kI32: {
          const auto x = static_cast<int32_t>(arg.integer);
          std::memcpy(&v, &x, sizeof x);
          break;
        }
        case LaunchArg::Kind::kI64:
          v = static_cast<uint64_t>(arg.integer);
          break;
        case LaunchArg::Kind::kF32:
          std::memcpy(&v, &arg.real, sizeof arg.real);
          break;
      }
      slots[i] = v;
      params[i] = &slots[i];
    }
    KTUNE_CU_CHECK(d.cuLaunchKernel(s.function, s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1],
                                    s.block[2], s.smem_bytes, stream, params.data(), nullptr));
  }
}

}  // namespace ktune::tuner::detail
