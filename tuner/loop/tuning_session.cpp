#include "tuner/loop/tuning_session.hpp"

#include <algorithm>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/shape.hpp"
#include "harness/device_info.hpp"
#include "harness/nvrtc_archs.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "kernel_templates/user_kernel/user_kernels.hpp"
#include "ktune/error.hpp"
#include "runtime/cache_compile_store.hpp"
#include "tuner/inputs/device_list.hpp"
#include "tuner/inputs/key_list.hpp"
#include "tuner/inputs/preset.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/library/cublas_baseline_measurer.hpp"
#include "tuner/library/cublaslt_algorithm_source.hpp"
#include "tuner/loop/candidate_measurer.hpp"
#include "tuner/loop/device_pool_measurer.hpp"
#include "tuner/loop/progress.hpp"
#include "tuner/space/arch_limits.hpp"
#include "tuner/space/device_limits.hpp"

namespace ktune::tuner {
namespace {

/// The shapes a job tunes: the shape set's, then the ones given by hand, else the preset's.
std::vector<NamedShape> job_shapes(const SessionRequest& r, const kernel_templates::KernelDescriptor& desc,
                                   const std::vector<NamedShape>& preset_shapes) {
  std::vector<NamedShape> shapes;
  if (!r.shapes_file.empty()) shapes = load_shape_set(resolve_config_file(r.shapes_file, "shapes")).shapes;
  for (const auto& text : r.shapes) shapes.push_back({"", Shape::parse(text).normalized(desc.dims).dims()});
  if (shapes.empty()) shapes = preset_shapes;
  if (shapes.empty())
    throw Error(ErrorKind::kBadInput,
                fmt::format("no shapes: give --shape {} or --shapes FILE", desc.example_shape()));
  return shapes;
}

/// The dtypes a job tunes: the request's (text where it entered, read here for `desc`), else the
/// preset's, else bf16. Throws ktune::Error(kBadInput) naming one the kernel does not support.
std::vector<DType> job_dtypes(const SessionRequest& r, const kernel_templates::KernelDescriptor& desc,
                              const std::vector<DType>& preset_dtypes) {
  std::vector<DType> dtypes;
  for (const std::string& text : r.dtypes) dtypes.push_back(desc.parse_dtype(text));
  if (!dtypes.empty()) return dtypes;
  dtypes = preset_dtypes.empty() ? std::vector<DType>{DType::kBF16} : preset_dtypes;
  for (const DType d : dtypes) desc.require_dtype(d);
  return dtypes;
}

/// The space file of `kernel`'s job; a user kernel's space is its description (NAME.toml).
std::filesystem::path space_path(const SessionRequest& r, const std::string& kernel) {
  if (!r.space.empty()) return r.space;
  if (const auto* user = kernel_templates::find_user_kernel(kernel)) return user->description().toml_path;
  return configs_dir() / "spaces" / (kernel + ".toml");
}

/// The jobs of a key list (tuner/inputs/key_list.hpp): each listed key with its own kernel, dtype and
/// layout, in file order, repeats dropped; --kernel or the preset's kernel keep only their keys.
std::vector<SessionJob> plan_key_list(const SessionRequest& r, const std::filesystem::path& file,
                                      TuneOptions& options) {
  if (!r.dtypes.empty() || r.layout) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("{} is a key list: it names each key's dtype and layout, so --dtype and --layout "
                            "do not go with it",
                            file.string()));
  }
  std::vector<std::string> kernels = r.kernels;
  if (!r.preset.empty()) {
    const Preset p = load_preset(r.preset);
    kernels = {p.kernel};
    options.strategy = p.strategy;
    options.budget = p.budget;
    options.seed = p.seed;
  }
  if (r.strategy) options.strategy = *r.strategy;
  if (r.budget) options.budget = *r.budget;
  if (r.search_seed) options.seed = *r.search_seed;

  const std::vector<ListedKey> listed_keys = load_key_list(file);
  refuse_triton_keys(listed_keys, file);
  std::vector<SessionJob> jobs;
  std::set<std::string> seen;
  for (const ListedKey& listed : listed_keys) {
    const KeyLine& k = listed.key;
    try {
      const auto* desc = kernel_templates::find_kernel(k.kernel);
      if (!kernels.empty() && std::find(kernels.begin(), kernels.end(), k.kernel) == kernels.end()) continue;
      desc->require_dtype(k.dtype);
      const std::string layout = k.layout.value_or(desc->default_layout);
      desc->require_layout(layout);
      if (kernel_templates::specs_of(k.kernel).empty())
        throw Error(ErrorKind::kBadInput, fmt::format("kernel '{}' has no templates to tune", k.kernel));
      const NamedShape shape{"", Shape::parse(k.shape).normalized(desc->dims).dims()};
      if (!seen.insert(fmt::format("{}|{}|{}|{}", k.kernel, shape.canonical(), to_string(k.dtype), layout))
               .second)
        continue;
      auto job =
          std::find_if(jobs.begin(), jobs.end(), [&](const SessionJob& j) { return j.kernel == k.kernel; });
      if (job == jobs.end()) {
        jobs.push_back({k.kernel, ConfigSpace::load(space_path(r, k.kernel)), {}});
        job = jobs.end() - 1;
      }
      job->keys.push_back({k.kernel, shape.normalized(job->space.dims()), k.dtype, layout});
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kBadInput) throw;
      throw Error(ErrorKind::kBadInput, fmt::format("{}:{}: {}", file.string(), listed.line, e.what()));
    }
  }
  if (jobs.empty()) {
    throw Error(ErrorKind::kBadInput, kernels.empty()
                                          ? fmt::format("the key list {} holds no key", file.string())
                                          : fmt::format("the key list {} holds no key of {}", file.string(),
                                                        fmt::join(kernels, ", ")));
  }
  return jobs;
}

}  // namespace

std::vector<SessionJob> plan_session(const SessionRequest& r, TuneOptions& options) {
  if (!r.shapes_file.empty()) {
    const auto file = resolve_config_file(r.shapes_file, "shapes");
    if (is_key_list(file)) return plan_key_list(r, file, options);
  }
  std::vector<std::string> kernels = r.kernels;
  std::vector<DType> preset_dtypes;
  std::vector<NamedShape> preset_shapes;
  std::optional<std::string> layout = r.layout;  // absent: each kernel's default
  if (!r.preset.empty()) {
    const Preset p = load_preset(r.preset);
    kernels = {p.kernel};
    preset_dtypes = p.dtypes;
    if (!r.layout && !p.layout.empty()) layout = p.layout;
    options.strategy = p.strategy;
    options.budget = p.budget;
    options.seed = p.seed;
    preset_shapes = p.shapes;
  }
  if (kernels.empty()) throw Error(ErrorKind::kBadInput, "give --kernel NAME or --preset NAME");
  if (r.strategy) options.strategy = *r.strategy;
  if (r.budget) options.budget = *r.budget;
  if (r.search_seed) options.seed = *r.search_seed;

  std::vector<SessionJob> jobs;
  for (const std::string& kernel : kernels) {
    const auto* desc = kernel_templates::find_kernel(kernel);
    const std::vector<DType> dtypes = job_dtypes(r, *desc, preset_dtypes);
    const std::string key_layout = layout.value_or(desc->default_layout);
    desc->require_layout(key_layout);
    if (kernel_templates::specs_of(kernel).empty())
      throw Error(ErrorKind::kBadInput, fmt::format("kernel '{}' has no templates to tune", kernel));
    SessionJob job{kernel, ConfigSpace::load(space_path(r, kernel)), {}};
    const std::vector<NamedShape> shapes = job_shapes(r, *desc, preset_shapes);
    for (const auto& d : dtypes)
      for (const auto& s : shapes)
        job.keys.push_back({kernel, s.normalized(job.space.dims()), d, key_layout});
    jobs.push_back(std::move(job));
  }
  return jobs;
}

SessionTarget compile_only_target(const std::string& arch, TuneOptions& options) {
  const ArchLimits limits = arch_limits(arch);
  harness::require_nvrtc_arch(arch);  // kBadInput listing NVRTC's architectures, not a sweep of errors
  options.arch = arch;
  options.limits = limits.limits;
  return {compile_only_gpu(arch, limits),
          fmt::format("compile-only for {} (limits of {})", arch, limits.device), ""};
}

SessionTarget device_target(TuneOptions& options) {
  harness::DeviceInfo dev;
  try {
    dev = harness::query_device(options.device);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kNoDevice) throw;
    throw Error(
        ErrorKind::kNoDevice,
        fmt::format("ktune tune needs a CUDA GPU: {}. To compile and record resources without one, use "
                    "--compile-only --arch sm_90",
                    e.what()),
        e.api_code(), e.where());
  }
  options.arch = dev.arch();
  options.limits = device_limits(dev);
  std::string which = fmt::format("device {}", options.device);
  if (!options.devices.empty()) {
    // Candidates of one key are spread over the listed GPUs: one model, or results would mix.
    check_one_model(options.device, options.devices, [](int d) { return harness::query_device(d); });
    which = fmt::format("{} workers on devices {}", options.devices.size(), fmt::join(options.devices, ","));
  }
  return {{dev.name, dev.cc_major, dev.cc_minor, dev.sm_count, dev.memory_bytes, "{}"},
          fmt::format("{} ({}), {}", dev.name, dev.arch(), which),
          std::to_string(dev.driver_version)};
}

size_t key_count(const std::vector<SessionJob>& jobs) {
  size_t n = 0;
  for (const SessionJob& j : jobs) n += j.keys.size();
  return n;
}

size_t planned_evaluations(const std::vector<SessionJob>& jobs, const TuneOptions& options) {
  size_t total = 0;
  for (const SessionJob& job : jobs)
    for (const auto& key : job.keys) {
      try {
        total += planned_evaluations(job.space, key, options);
      } catch (const Error&) {
        // reported per key by the loop
      }
    }
  return total;
}

size_t SessionResult::failed() const {
  size_t n = 0;
  for (const auto& s : keys) n += s.error.empty() ? 0 : 1;
  return n;
}

SessionResult run_session(cache::ConfigCache& db, const SessionTarget& target, const cache::RunInfo& run,
                          const std::vector<SessionJob>& jobs, const TuneOptions& options,
                          const SessionHooks& hooks) {
  const auto sources = kernel_templates::SourceLibrary::from_environment();
  std::unique_ptr<CandidateMeasurer> measurer;
  if (!options.compile_only && options.devices.size() > 1) {
    measurer = std::make_unique<DevicePoolMeasurer>(options.devices, hooks.stop, hooks.progress);
  } else if (!options.compile_only) {
    measurer = std::make_unique<RunnerMeasurer>(options.device, hooks.stop);
  }
  // cuBLAS baselines of gemm keys: the heuristic's choice, measured by the sweep's worker.
  std::unique_ptr<CublasBaselineMeasurer> baseline;
  if (!options.compile_only)
    baseline = std::make_unique<CublasBaselineMeasurer>(options.device, measurer.get());
  // The library's algorithms as candidates (queried here; measured in the worker like the templates).
  std::unique_ptr<CublasLtAlgorithmSource> library;
  if (!options.compile_only) library = std::make_unique<CublasLtAlgorithmSource>(options.device);
  SessionResult result;
  for (const SessionJob& job : jobs) {
    runtime::CacheCompileStore store(db, job.kernel,
                                     sources.hash(kernel_templates::kernel_source_files(job.kernel)));
    harness::NvrtcCompiler compiler(&store);
    LoopDeps deps{[&compiler](const harness::CompileRequest& r) { return compiler.compile(r); },
                  measurer.get(),
                  &sources,
                  hooks.progress,
                  baseline.get(),
                  hooks.stop,
                  library.get()};
    {
      TuningLoop loop(db, target.gpu, run, options, deps);
      for (const auto& key : job.keys) {
        if (hooks.stop != nullptr && hooks.stop->load()) {
          result.stopped = true;
          break;
        }
        result.keys.push_back(loop.tune(job.space, key));
        if (hooks.on_key) hooks.on_key(result.keys.back());
        if (result.keys.back().stopped) {
          result.stopped = true;
          break;
        }
      }
    }
    result.compile_hits += store.hits();
    result.compile_misses += store.misses();
    if (result.stopped) break;
  }
  return result;
}

nlohmann::json summary_json(const KeySummary& s) {
  nlohmann::json j{{"kernel", s.kernel},
                   {"shape", s.shape},
                   {"label", s.label},
                   {"dtype", to_string(s.dtype)},
                   {"layout", s.layout},
                   {"space_points", s.space_points},
                   {"candidates", s.candidates},
                   {"unmeasurable", s.unmeasurable},
                   {"seeds", s.seeds},
                   {"seed_rejected", s.seed_rejected},
                   {"sibling_seeds", s.sibling_seeds},
                   {"evaluations", s.evaluations},
                   {"library_candidates", s.library_candidates},
                   {"measured", s.measured},
                   {"from_cache", s.from_cache},
                   {"outcomes", s.outcomes},
                   {"compile_wait_s", s.compile_wait_s},
                   {"measure_s", s.measure_s}};
  if (s.winner) {
    j["winner"] = *s.winner;
    j["config"] = nlohmann::json::parse(s.winner_config_json, nullptr, false);
    j["median_us"] = s.winner_median_us;
    j["winner_kept"] = s.winner_kept;
    j["winner_source"] = s.winner->find(".cublaslt.") != std::string::npos ? "library" : "template";
  } else {
    j["winner"] = nullptr;
  }
  if (!s.error.empty()) j["error"] = s.error;
  if (s.stopped) j["stopped"] = true;
  return j;
}

/// When every config of a key that ran was incorrect, most likely the reference is wrong: says so
/// (a user kernel's reference named by its file and line); "" otherwise.
std::string reference_hint(const KeySummary& s) {
  size_t ran = 0;
  size_t incorrect = 0;
  for (const auto& [outcome, n] : s.outcomes) {
    if (outcome == "incorrect") incorrect += n;
    if (outcome == "ok" || outcome == "incorrect") ran += n;
  }
  if (incorrect == 0 || incorrect != ran) return "";
  std::string out = "every config that ran disagrees with the reference";
  if (const auto* user = kernel_templates::find_user_kernel(s.kernel)) {
    out += fmt::format(" (check the reference, {}:{})", user->description().toml_path.string(),
                       user->description().reference.line);
  }
  return out;
}

std::string summary_line(const KeySummary& s) {
  std::string counts;
  for (const auto& [outcome, n] : s.outcomes)
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, outcome);
  std::string line = fmt::format("{} {} {} {}: ", s.kernel, s.shape, to_string(s.dtype), s.layout);
  if (!s.error.empty()) {
    const std::string hint = reference_hint(s);
    return line + "error: " + s.error + (hint.empty() ? "" : "; " + hint);
  }
  if (s.stopped)
    return line + fmt::format("stopped before its winner [{} evaluated, {} stored by this run]",
                              s.evaluations, s.measured);
  if (s.winner)
    line +=
        fmt::format("winner {} {:.3f} us{}", *s.winner, s.winner_median_us, s.winner_kept ? " (kept)" : "");
  else if (const std::string hint = reference_hint(s); !hint.empty())
    line += "no winner: " + hint;
  else
    line += "no winner (compile-only)";
  return line + fmt::format(" [{} evaluated: {}; {} from the cache]", s.evaluations, counts, s.from_cache);
}

}  // namespace ktune::tuner
