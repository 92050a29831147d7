#include "kernel_templates/user_kernel/user_kernel_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "kernel_templates/user_kernel/user_kernel_pending_cubin.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

/// Largest block the hardware launches (every arch since sm_20).
constexpr int64_t kMaxThreadsPerBlock = 1024;

std::vector<std::string> slot_names(const UserKernelDescription& d) {
  std::vector<std::string> out = d.dims;
  for (const auto& p : d.params) out.push_back(p.name);
  out.emplace_back("elem_bytes");
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

UserKernelSpec::UserKernelSpec(UserKernelDescription description)
    : d_(std::move(description)), source_name_(d_.name + ".cu"), ev_(slot_names(d_)) {
  const auto add = [this](const UserExpression& e) { index_[&e] = ev_.add(e.text); };
  for (const auto& a : d_.args) {
    add(a.is_buffer() ? a.elements : a.value);
    for (const auto* e : {&a.fill.min, &a.fill.max, &a.fill.start, &a.fill.step, &a.fill.modulo}) {
      if (*e) add(**e);
    }
  }
  const auto add_launch = [&](const UserLaunch& l) {
    for (const auto& e : l.grid) add(e);
    for (const auto& e : l.block) add(e);
    if (l.shared) add(*l.shared);
  };
  for (const auto& l : d_.launches) add_launch(l);
  if (d_.reference.kind == UserReference::Kind::kKernel) add_launch(d_.reference.launch);
  if (d_.work.bytes) add(*d_.work.bytes);
  if (d_.work.flops) add(*d_.work.flops);
}

std::string UserKernelSpec::compile_text() const {
  std::string out = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";
  const bool fp8 = std::any_of(d_.dtypes.begin(), d_.dtypes.end(),
                               [](DType t) { return t == DType::kFP8E4M3 || t == DType::kFP8E5M2; });
  if (fp8) out += "#include <cuda_fp8.h>\n";
  out += fmt::format("#line 1 \"{}\"\n", d_.cu_path.filename().string());
  return out + d_.cu_text;
}

std::vector<std::string> UserKernelSpec::param_names() const {
  std::vector<std::string> out;
  for (const auto& p : d_.params) out.push_back(p.name);
  return out;
}

void UserKernelSpec::bind(const Problem& problem, const Config* config) const {
  std::size_t slot = 0;
  for (const auto& dim : d_.dims) ev_.set(slot++, static_cast<double>(problem.dim(dim)));
  for (const auto& p : d_.params) {
    ev_.set(slot++, config != nullptr ? static_cast<double>(config->at(p.name)) : 1.0);
  }
  ev_.set(slot, static_cast<double>(size_of(problem.dtype)));
}

int64_t UserKernelSpec::eval_int(const UserExpression& e) const {
  const double v = ev_.eval(index_.at(&e));
  if (!std::isfinite(v) || std::abs(v - std::round(v)) > 1e-9 || std::abs(v) > 9.0e15) {
    throw Error(ErrorKind::kBadInput, fmt::format("{}:{}: {}: '{}' is {}, not an integer",
                                                  d_.toml_path.string(), e.line, e.field, e.text, v));
  }
  return static_cast<int64_t>(std::llround(v));
}

std::optional<std::string> UserKernelSpec::tuning_rejection(const Problem& problem,
                                                            const Config& config) const {
  if (auto why = rejection(problem, config)) return why;
  return prune_rejection(problem, config);
}

std::optional<std::string> UserKernelSpec::prune_rejection(const Problem& problem,
                                                           const Config& config) const {
  if (!d_.prebuilt || d_.prebuilt->prunes.empty() || !shaped(problem)) return std::nullopt;
  // A few entries at most, and the space asks for every config: a scan, no lock, no binding.
  for (const UserPrune& p : d_.prebuilt->prunes) {
    if (p.dtype != problem.dtype) continue;
    if (!std::all_of(p.shape.begin(), p.shape.end(),
                     [&](const auto& dim) { return problem.dim(dim.first) == dim.second; }))
      continue;
    if (std::find(p.keep.begin(), p.keep.end(), config) != p.keep.end()) return std::nullopt;
    return fmt::format("prune_configs_by keeps {} of the configs for {} {}, not this one", p.keep.size(),
                       problem.shape_text(), to_string(problem.dtype));
  }
  return std::nullopt;
}

std::optional<std::string> UserKernelSpec::rejection(const Problem& problem, const Config& config) const {
  if (std::find(d_.dtypes.begin(), d_.dtypes.end(), problem.dtype) == d_.dtypes.end())
    return fmt::format("{} does not serve dtype {}", d_.name, to_string(problem.dtype));
  if (!problem.layout.empty()) return fmt::format("{} has no layouts (got '{}')", d_.name, problem.layout);
  if (config.variant != d_.function)
    return fmt::format("config of template '{}', not '{}'", config.variant, d_.function);
  for (const auto& p : d_.params) {
    const auto v = config.find(p.name);
    if (!v) return fmt::format("config lacks parameter {}", p.name);
    if (std::find(p.values.begin(), p.values.end(), *v) == p.values.end())
      return fmt::format("{} = {} is not one of the parameter's values", p.name, *v);
  }
  if (config.params.size() != d_.params.size()) return "config has parameters the template lacks";
  const UserCubin* cubin = nullptr;
  try {
    cubin = cubin_of(problem, config);
  } catch (const Error& e) {
    return std::string(e.what());
  }
  if (d_.prebuilt && cubin == nullptr)
    return fmt::format("no prebuilt cubin of this config for {} {}", problem.shape_text(),
                       to_string(problem.dtype));
  try {
    std::lock_guard lock(mu_);
    bind(problem, &config);
    for (const auto& a : d_.args) {
      if (!a.is_buffer()) continue;
      const int64_t n = eval_int(a.elements);
      if (n < 1) {
        return fmt::format(
            "{}:{}: arg '{}'.elements = '{}' is {} for {}: a buffer needs at least one element",
            d_.toml_path.string(), a.elements.line, a.name, a.elements.text, n, problem.shape_text());
      }
      // a data reference's inputs are its files, checked by the worker that reads them
      if (a.kind != UserArg::Kind::kInput || d_.reference.kind == UserReference::Kind::kData) continue;
      const BufferFill fill = fill_of(a);
      if (auto why = fill.invalid_reason(static_cast<uint64_t>(n), a.integer)) {
        return fmt::format("{}:{}: arg '{}'.fill: {} for {} ({})", d_.toml_path.string(),
                           a.fill.line != 0 ? a.fill.line : a.line, a.name, *why, problem.shape_text(),
                           fill.describe());
      }
    }
    const auto check_launch = [&](const UserLaunch& l) -> std::optional<std::string> {
      int64_t threads = 1;
      for (const auto* dims : {&l.grid, &l.block}) {
        for (const auto& e : *dims) {
          const int64_t v = eval_int(e);
          if (v < 1 || v > INT32_MAX)
            return fmt::format("{}:{}: {} = '{}' is {} for {}", d_.toml_path.string(), e.line, e.field,
                               e.text, v, problem.shape_text());
          if (dims == &l.block) threads *= v;
        }
      }
      if (cubin != nullptr) threads = cubin->threads;
      if (threads > kMaxThreadsPerBlock)
        return fmt::format("{}:{}: a block of {} threads (more than {})", d_.toml_path.string(), l.line,
                           threads, kMaxThreadsPerBlock);
      if (l.shared && eval_int(*l.shared) < 0)
        return fmt::format("{}:{}: {} is negative", d_.toml_path.string(), l.shared->line, l.shared->field);
      return std::nullopt;
    };
    for (const auto& l : d_.launches) {
      if (auto why = check_launch(l)) return why;
    }
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

std::optional<std::string> UserKernelSpec::arch_rejection(std::string_view arch) const {
  if (!d_.prebuilt) return std::nullopt;
  // sm_90 and sm_90a are one device: compare the numbers.
  const auto digits = [](std::string_view a) {
    std::string out;
    for (char c : a) {
      if (c >= '0' && c <= '9') out += c;
    }
    return out;
  };
  if (digits(arch) == digits(d_.prebuilt->arch)) return std::nullopt;
  return fmt::format("the prebuilt cubins of {} run on {} only, not {}", d_.name, d_.prebuilt->arch, arch);
}

bool UserKernelSpec::shaped(const Problem& problem) const {
  return std::all_of(d_.dims.begin(), d_.dims.end(), [&](const std::string& dim) {
    return std::any_of(problem.dims.begin(), problem.dims.end(),
                       [&](const auto& d) { return d.first == dim; });
  });
}

const UserCubin* UserKernelSpec::cubin_of(const Problem& problem, const Config& config) const {
  if (!d_.prebuilt) return nullptr;
  std::lock_guard lock(mu_);
  // A config named without a shape (a space's listing): its first cubin stands for it.
  if (!shaped(problem)) return settled(d_.prebuilt->find(config, problem.dtype));
  bind(problem, &config);
  return bound_cubin(config, problem.dtype);
}

const UserCubin* UserKernelSpec::bound_cubin(const Config& config, DType dtype) const {
  if (!d_.prebuilt) return nullptr;
  return settled(d_.prebuilt->find(config, dtype, [this](const std::string& arg) {
    return eval_int(d_.args[static_cast<std::size_t>(d_.arg_index(arg))].value);
  }));
}

const UserCubin* UserKernelSpec::settled(const UserCubin* c) const {
  if (c == nullptr || !c->pending) return c;
  const auto it = arrived_.find(c);
  return it != arrived_.end() ? &it->second : c;
}

const UserCubin* UserKernelSpec::arrive(const UserCubin& c) const {
  UserCubin got = await_pending_cubin(d_, c);
  std::lock_guard lock(mu_);
  // another thread may have waited for the same cubin: the first to arrive is kept
  return &arrived_.try_emplace(&c, std::move(got)).first->second;
}

std::string UserKernelSpec::canonical_name(const Problem& problem, const Config& config) const {
  std::string out = fmt::format("{}.{}", d_.name, to_string(problem.dtype));
  if (const UserCubin* cubin = cubin_of(problem, config); cubin != nullptr && !cubin->name.empty())
    return out + "." + cubin->name;
  for (const auto& [name, value] : config.params) out += fmt::format(".{}{}", lower(name), value);
  return out;
}

std::string UserKernelSpec::name_expression(const std::string& function, const Config* config,
                                            DType dtype) const {
  std::string args;
  if (config != nullptr) {
    for (const auto& p : d_.params) args += std::to_string(config->at(p.name)) + ",";
  }
  return fmt::format("{}<{}{}>", function, args, cuda_type_name(dtype));
}

CompileSpec UserKernelSpec::compile_spec(const Problem& problem, const Config& config) const {
  if (auto why = rejection(problem, config)) throw Error(ErrorKind::kBadInput, *why);
  CompileSpec spec;
  const UserCubin* cubin = cubin_of(problem, config);
  if (cubin != nullptr && cubin->pending) cubin = arrive(*cubin);
  if (cubin != nullptr && !cubin->failed.empty())
    throw Error(
        ErrorKind::kRuntime,
        fmt::format("the compile of {} failed: {}",
                    cubin->name.empty() ? cubin->file.filename().string() : cubin->name, cubin->failed));
  if (cubin != nullptr) {
    spec.source_name = cubin->file.filename().string();
    spec.name_expressions = {cubin->entry};
    spec.prebuilt_cubin = cubin->file;
    return spec;
  }
  spec.source_name = source_name_;
  for (const auto& l : d_.launches) {
    auto expr = name_expression(l.function, &config, problem.dtype);
    if (std::find(spec.name_expressions.begin(), spec.name_expressions.end(), expr) ==
        spec.name_expressions.end())
      spec.name_expressions.push_back(std::move(expr));
  }
  // The tuned template first: the tuner reports its resources as the candidate's.
  const auto main = name_expression(d_.function, &config, problem.dtype);
  const auto it = std::find(spec.name_expressions.begin(), spec.name_expressions.end(), main);
  if (it == spec.name_expressions.end()) {
    spec.name_expressions.insert(spec.name_expressions.begin(), main);
  } else {
    std::rotate(spec.name_expressions.begin(), it, it + 1);
  }
  spec.options = {"-std=c++17"};
  return spec;
}

std::vector<TensorSpec> UserKernelSpec::tensors(const Problem& problem, bool reference) const {
  std::vector<TensorSpec> out;
  for (const auto& a : d_.args) {
    if (!a.is_buffer()) continue;
    TensorSpec t;
    t.name = reference && a.kind != UserArg::Kind::kInput ? a.name + "_ref" : a.name;
    t.dtype = a.dtype.value_or(problem.dtype);
    t.integer = a.integer;
    t.elements = eval_int(a.elements);
    switch (a.kind) {
      case UserArg::Kind::kInput:
        t.role = TensorRole::kInput;
        t.fill = d_.reference.kind == UserReference::Kind::kData
                     ? BufferFill::file(data_file(problem, a.name))
                     : fill_of(a);
        break;
      case UserArg::Kind::kOutput:
        t.role = TensorRole::kOutput;
        break;
      case UserArg::Kind::kWorkspace:
        t.role = TensorRole::kWorkspace;
        break;
      case UserArg::Kind::kScalar:
        continue;
    }
    out.push_back(std::move(t));
  }
  return out;
}

BufferFill UserKernelSpec::fill_of(const UserArg& a) const {
  const UserFill& f = a.fill;
  switch (f.kind) {
    case BufferFill::Kind::kRandom:
      return BufferFill::random(f.scale);
    case BufferFill::Kind::kRange:
      return BufferFill::range(ev_.eval(index_.at(&*f.min)), ev_.eval(index_.at(&*f.max)));
    case BufferFill::Kind::kPattern:
      return BufferFill::repeat(f.pattern);
    case BufferFill::Kind::kSequence: {
      std::optional<int64_t> modulo;
      if (f.modulo) modulo = eval_int(*f.modulo);
      return BufferFill::sequence(f.start ? eval_int(*f.start) : 0, f.step ? eval_int(*f.step) : 1, modulo);
    }
    case BufferFill::Kind::kFile:  // never written in a description (a data reference's inputs)
      break;
  }
  return {};
}

KernelLaunch UserKernelSpec::make_launch(const UserLaunch& l, const Config* config, DType dtype,
                                         bool reference, const UserCubin* cubin) const {
  KernelLaunch k;
  k.name_expression = cubin != nullptr ? cubin->entry : name_expression(l.function, config, dtype);
  const auto dim3 = [&](const std::vector<UserExpression>& es) {
    Dim3 d;
    uint32_t* parts[] = {&d.x, &d.y, &d.z};
    for (std::size_t i = 0; i < es.size() && i < 3; ++i) *parts[i] = static_cast<uint32_t>(eval_int(es[i]));
    return d;
  };
  k.dims.grid = dim3(l.grid);
  k.dims.block = cubin != nullptr ? Dim3{cubin->threads, 1, 1} : dim3(l.block);
  k.dims.dynamic_smem_bytes = cubin != nullptr ? cubin->shared_bytes
                              : l.shared       ? static_cast<uint32_t>(eval_int(*l.shared))
                                               : 0;
  std::vector<const UserArg*> args;
  if (l.args.empty()) {
    for (const auto& a : d_.args) args.push_back(&a);
  } else {
    for (const auto& name : l.args) args.push_back(&d_.args[static_cast<std::size_t>(d_.arg_index(name))]);
  }
  for (const UserArg* a : args) {
    if (cubin != nullptr && std::find(cubin->ones.begin(), cubin->ones.end(), a->name) != cubin->ones.end())
      continue;  // compiled in as the constant 1
    if (a->is_buffer()) {
      const bool renamed = reference && a->kind != UserArg::Kind::kInput;
      k.args.push_back(ArgSpec::of_tensor(renamed ? a->name + "_ref" : a->name));
      continue;
    }
    const double v = ev_.eval(index_.at(&a->value));
    if (a->scalar_type == "f32") {
      k.args.push_back(ArgSpec::f32(static_cast<float>(v)));
    } else if (a->scalar_type == "i64") {
      k.args.push_back(ArgSpec::i64(eval_int(a->value)));
    } else {
      const int64_t i = eval_int(a->value);
      if (i < INT32_MIN || i > INT32_MAX) {
        throw Error(ErrorKind::kBadInput,
                    fmt::format("{}:{}: arg '{}' = {} does not fit an i32 (use type = \"i64\")",
                                d_.toml_path.string(), a->line, a->name, i));
      }
      k.args.push_back(ArgSpec::i32(static_cast<int32_t>(i)));
    }
  }
  return k;
}

void UserKernelSpec::add_launches(LaunchPlan& plan, const Config& config, DType dtype, bool reference) const {
  const UserCubin* cubin = bound_cubin(config, dtype);
  if (cubin != nullptr && (cubin->pending || !cubin->failed.empty()))
    throw Error(ErrorKind::kRuntime, fmt::format("{}: the cubin {} is {}: compile_spec first", d_.name,
                                                 cubin->file.filename().string(),
                                                 cubin->pending ? "not compiled yet" : "a failed compile"));
  for (const auto& l : d_.launches) plan.launches.push_back(make_launch(l, &config, dtype, reference, cubin));
  if (cubin == nullptr) return;
  KernelLaunch& k = plan.launches.back();
  const int64_t programs = int64_t{k.dims.grid.x} * k.dims.grid.y * k.dims.grid.z;
  for (std::size_t i = 0; i < cubin->scratch.size(); ++i) {
    if (cubin->scratch[i] == 0) {
      k.args.push_back(ArgSpec::null_pointer());
      continue;
    }
    TensorSpec t;
    t.name = fmt::format("scratch.{}{}", i, reference ? "_ref" : "");
    t.role = TensorRole::kWorkspace;
    t.integer = IntType::kU8;
    t.elements = static_cast<int64_t>(cubin->scratch[i]) * programs;
    k.args.push_back(ArgSpec::of_tensor(t.name));
    plan.tensors.push_back(std::move(t));
  }
}

LaunchPlan UserKernelSpec::launch_plan(const Problem& problem, const Config& config) const {
  if (auto why = rejection(problem, config)) throw Error(ErrorKind::kBadInput, *why);
  std::lock_guard lock(mu_);
  bind(problem, &config);
  LaunchPlan plan;
  plan.tensors = tensors(problem, false);
  add_launches(plan, config, problem.dtype, false);
  return plan;
}

WorkCounts UserKernelSpec::work(const Problem& problem) const {
  std::lock_guard lock(mu_);
  bind(problem, nullptr);
  WorkCounts w;
  if (d_.work.bytes) w.min_bytes = ev_.eval(index_.at(&*d_.work.bytes));
  if (d_.work.flops) w.flops = ev_.eval(index_.at(&*d_.work.flops));
  return w;
}

std::vector<AlignmentRule> UserKernelSpec::alignment(const Problem&, const Config&) const { return {}; }

ReferenceSpec UserKernelSpec::reference(const Problem& problem) const {
  ReferenceSpec ref;
  switch (d_.reference.kind) {
    case UserReference::Kind::kNone:
      throw Error(ErrorKind::kBadInput, fmt::format("{}: verify = false: kernel '{}' has no reference",
                                                    d_.toml_path.string(), d_.name));
    case UserReference::Kind::kConfig: {
      const Config& c = d_.reference.config;
      ref.compile = compile_spec(problem, c);  // throws when the config cannot serve the problem
      std::lock_guard lock(mu_);
      bind(problem, &c);
      ref.plan.tensors = tensors(problem, true);
      add_launches(ref.plan, c, problem.dtype, true);
      break;
    }
    case UserReference::Kind::kData: {
      // Nothing runs: each output's expected values are read into its `_ref` buffer like an input.
      for (const auto& a : d_.args) {
        if (a.kind != UserArg::Kind::kOutput) continue;
        std::lock_guard lock(mu_);
        bind(problem, nullptr);
        TensorSpec t;
        t.name = a.name + "_ref";
        t.role = TensorRole::kInput;
        t.integer = a.integer;
        t.dtype = a.integer ? a.dtype.value_or(problem.dtype) : DType::kF32;
        t.elements = eval_int(a.elements);
        t.fill = BufferFill::file(data_file(problem, a.name));
        ref.plan.tensors.push_back(std::move(t));
      }
      break;
    }
    case UserReference::Kind::kKernel: {
      std::lock_guard lock(mu_);
      bind(problem, nullptr);
      ref.compile.source_name = source_name_;
      ref.compile.name_expressions = {name_expression(d_.reference.launch.function, nullptr, problem.dtype)};
      ref.compile.options = {"-std=c++17"};
      ref.plan.tensors = tensors(problem, true);
      ref.plan.launches.push_back(make_launch(d_.reference.launch, nullptr, problem.dtype, true));
      break;
    }
  }
  for (const auto& a : d_.args) {
    if (a.kind == UserArg::Kind::kOutput) ref.compare.emplace_back(a.name, a.name + "_ref");
  }
  for (const auto& [output, bounds] : d_.reference.tolerance) {
    if (bounds.rel) ref.rel_tolerance.emplace(output, *bounds.rel);
    if (bounds.abs) ref.abs_tolerance.emplace(output, *bounds.abs);
  }
  return ref;
}

std::string UserKernelSpec::data_file(const Problem& problem, const std::string& arg) const {
  return (d_.reference.data / std::string(to_string(problem.dtype)) / problem.shape_text() / (arg + ".bin"))
      .string();
}

HostTensors UserKernelSpec::cpu_reference(const Problem&, const HostTensors&) const {
  throw Error(ErrorKind::kBadInput,
              fmt::format("kernel '{}' is a user kernel: its reference runs on the GPU only", d_.name));
}

Config UserKernelSpec::default_config(const Problem&) const {
  if (!d_.seeds.empty()) return d_.seeds.front();
  std::vector<Config::Param> params;
  for (const auto& p : d_.params) params.emplace_back(p.name, p.values.front());
  return Config(d_.function, std::move(params));
}

}  // namespace ktune::kernel_templates
