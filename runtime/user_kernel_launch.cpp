/// ktune::Runtime's generic entry for user kernels (docs/byo.md): Runtime::launch and prepare by
/// kernel name. A user kernel's plan is its description's launch plan for the tuned config (else
/// its default config), bound to the caller's buffers in the description's order; its workspace
/// arguments live in the plan's own workspace block.

#include <algorithm>
#include <climits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cache/config_cache.hpp"
#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/user_kernel/user_kernels.hpp"
#include "ktune/ktune.hpp"
#include "runtime/detail/runtime_impl.hpp"

namespace ktune {
namespace {

namespace kt = kernel_templates;

/// The caller's buffers: the description's input and output arguments, in order.
std::vector<std::string> buffer_slots(const kt::UserKernelSpec& spec) {
  std::vector<std::string> out;
  for (const auto& a : spec.description().args) {
    if (a.kind == kt::UserArg::Kind::kInput || a.kind == kt::UserArg::Kind::kOutput) out.push_back(a.name);
  }
  return out;
}

const kt::UserKernelSpec& user_spec(const std::string& kernel) {
  const kt::UserKernelSpec* spec = kt::find_user_kernel(kernel);
  if (spec == nullptr) {
    throw Error(ErrorKind::kNotFound,
                fmt::format("no user kernel '{}' is loaded (RuntimeOptions::kernel_dirs, $KTUNE_KERNEL_DIR)",
                            kernel));
  }
  return *spec;
}

/// The problem of a call: every dimension of the kernel, in its order, each in [1, 2^31-1].
kt::Problem user_problem(const kt::UserKernelSpec& spec, const ProblemDims& dims, DType dtype) {
  kt::Problem p;
  p.dtype = dtype;
  for (const auto& name : spec.dims()) {
    const auto it = std::find_if(dims.begin(), dims.end(), [&](const auto& d) { return d.first == name; });
    if (it == dims.end() || it->second < 1 || it->second > INT32_MAX) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("{}: dimension {} missing or outside [1, 2^31-1]", spec.kernel(), name));
    }
    p.dims.emplace_back(name, it->second);
  }
  if (dims.size() != p.dims.size())
    throw Error(ErrorKind::kBadInput,
                fmt::format("{}: dimensions are {}", spec.kernel(), fmt::join(spec.dims(), ", ")));
  if (std::find(spec.dtypes().begin(), spec.dtypes().end(), dtype) == spec.dtypes().end()) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("{}: dtype {} is not served", spec.kernel(), to_string(dtype)));
  }
  return p;
}

}  // namespace

kt::SourceLibrary Runtime::Impl::user_kernel_sources(const RuntimeOptions& o) {
  kt::load_kernel_folders_from_environment();
  for (const auto& dir : o.kernel_dirs) kt::load_kernel_folder(dir);
  return kt::SourceLibrary::from_environment();
}

RuntimePlan* Runtime::Impl::build_user_plan(const std::string& key_text, const kt::KernelSpec& spec,
                                            const kt::Problem& p) {
  std::lock_guard build_lock(build_mutex);
  {
    std::shared_lock lock(map_mutex);
    if (auto it = user_plans.find(key_text); it != user_plans.end()) return it->second.get();
  }
  ensure_context();
  const std::string kernel(spec.kernel());
  PlanInfo info;
  Config config = spec.default_config(p);
  if (const cache::BestConfig* best = index.find(kernel, p.shape_text(), p.dtype, "")) {
    config = Config::from_json_text(best->config_json);
    info.source = PlanInfo::Source::kTuned;
    info.tuned_shape = best->tuned_shape;
    info.tuned_median_us = best->stats.median_us;
    info.verified = best->verified;
  } else {
    info.verified = spec.verifies();
    if (recorder) recorder->record({kernel, p.shape_text(), p.dtype, ""});
  }
  if (auto why = spec.rejection(p, config))
    throw Error(ErrorKind::kBadInput, fmt::format("{}: {}", kernel, *why));
  info.config_name = spec.canonical_name(p, config);
  const auto slots = buffer_slots(static_cast<const kt::UserKernelSpec&>(spec));
  auto plan = std::make_unique<RuntimePlan>();
  plan->launcher = runtime::detail::bind_plan(spec.launch_plan(p, config), {}, slots, {}, {});
  const harness::CompileRequest request =
      kt::make_compile_request(spec.compile_spec(p, config), sources, device.arch());
  KernelCompiler& kc = compiler_for(kernel);
  harness::CompileResult compiled = kc.compiler->compile(request);
  if (compiled.cache_key.empty()) compiled.cache_key = kc.compiler->cache_key(request);
  finish_kernel_plan(*plan, compiled, std::move(info));
  RuntimePlan* out = plan.get();
  std::unique_lock lock(map_mutex);
  user_plans.emplace(key_text, std::move(plan));
  return out;
}

const RuntimePlan& Runtime::Impl::user_plan(const std::string& kernel, const ProblemDims& dims, DType dtype) {
  const kt::UserKernelSpec& spec = user_spec(kernel);
  const kt::Problem p = user_problem(spec, dims, dtype);
  const std::string key_text = fmt::format("{} {} {}", kernel, p.shape_text(), to_string(dtype));
  {
    std::shared_lock lock(map_mutex);
    if (auto it = user_plans.find(key_text); it != user_plans.end()) return *it->second;
  }
  return *build_user_plan(key_text, spec, p);
}

PlanInfo Runtime::prepare(const std::string& kernel, const ProblemDims& dims, DType dtype) {
  return impl_->user_plan(kernel, dims, dtype).info;
}

void Runtime::launch(const std::string& kernel, const ProblemDims& dims, DType dtype,
                     const std::vector<void*>& buffers, Stream stream) {
  const RuntimePlan& plan = impl_->user_plan(kernel, dims, dtype);
  const auto slots = buffer_slots(user_spec(kernel));
  if (buffers.size() != slots.size()) {
    throw Error(ErrorKind::kBadInput, fmt::format("{}: {} buffers given; it takes {} ({})", kernel,
                                                  buffers.size(), slots.size(), fmt::join(slots, ", ")));
  }
  std::vector<CUdeviceptr> ptrs;
  ptrs.reserve(buffers.size());
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i] == nullptr)
      throw Error(ErrorKind::kBadInput, fmt::format("{}: buffer {} is null", kernel, slots[i]));
    ptrs.push_back(reinterpret_cast<CUdeviceptr>(buffers[i]));
  }
  impl_->ensure_context();
  runtime::detail::launch_plan(plan.launcher, ptrs, plan.own_workspace, {},
                               reinterpret_cast<CUstream>(stream));
}

}  // namespace ktune
