/// `ktune tune`: the offline sweep (DESIGN.md "Command line"). For every (kernel, shape, dtype,
/// layout) the tuning loop (tuner/tuning_loop.hpp) compiles candidates on a thread pool ahead of the
/// GPU, measures them in the worker, stores every result and names the winner. `--compile-only
/// --arch sm_XX` needs no GPU: it compiles every candidate and records resources and errors.

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cache/shape.hpp"
#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "cli/layout_option.hpp"
#include "cli/output.hpp"
#include "cli/timing_flags.hpp"
#include "harness/device_info.hpp"
#include "harness/nvrtc_archs.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "tuner/arch_limits.hpp"
#include "tuner/cache_compile_store.hpp"
#include "tuner/candidate_measurer.hpp"
#include "tuner/cublas_baseline_measurer.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/preset.hpp"
#include "tuner/progress.hpp"
#include "tuner/tuning_loop.hpp"

namespace ktune::cli {
namespace {

struct TuneArgs {
  std::string kernels;  ///< comma list
  std::string preset;
  std::string shapes_file;
  std::vector<std::string> shapes;
  std::string dtypes;  ///< comma list
  std::optional<std::string> layout;
  std::string space;
  std::optional<std::string> strategy;
  std::optional<size_t> budget;
  std::optional<uint64_t> search_seed;
  int device = 0;
  std::string db;
  bool compile_only = false;
  std::string arch;
  bool retune = false;
  bool no_counters = false;
  size_t compile_threads = 0;
  bool json = false;
  TimingFlags timing;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

/// One kernel's job: its space and keys.
struct Job {
  std::string kernel;
  tuner::ConfigSpace space;
  std::vector<tuner::TuneKey> keys;
};

std::vector<Job> plan_jobs(const TuneArgs& a, tuner::TuneOptions& options) {
  std::vector<std::string> kernels = split_list(a.kernels);
  std::vector<std::string> dtypes = split_list(a.dtypes);
  std::vector<tuner::NamedShape> preset_shapes;
  std::optional<std::string> layout = a.layout;  // absent: each kernel's default
  if (!a.preset.empty()) {
    const tuner::Preset p = tuner::load_preset(a.preset);
    kernels = {p.kernel};
    if (dtypes.empty()) dtypes = p.dtypes;
    if (!a.layout && !p.layout.empty()) layout = p.layout;
    options.strategy = p.strategy;
    options.budget = p.budget;
    options.seed = p.seed;
    preset_shapes = p.shapes;
  }
  if (kernels.empty()) throw Error(ErrorKind::kBadInput, "give --kernel NAME or --preset NAME");
  if (a.strategy) options.strategy = tuner::parse_strategy(*a.strategy);
  if (a.budget) options.budget = *a.budget;
  if (a.search_seed) options.seed = *a.search_seed;
  if (dtypes.empty()) dtypes = {"bf16"};

  std::vector<Job> jobs;
  for (const std::string& kernel : kernels) {
    const auto* desc = kernel_templates::find_kernel(kernel);
    for (const auto& d : dtypes) desc->require_dtype(d);
    const std::string key_layout = resolve_layout(*desc, layout);
    if (kernel_templates::specs_of(kernel).empty())
      throw Error(ErrorKind::kBadInput, fmt::format("kernel '{}' has no templates to tune", kernel));
    const std::filesystem::path space_path = a.space.empty()
                                                 ? tuner::configs_dir() / "spaces" / (kernel + ".toml")
                                                 : std::filesystem::path(a.space);
    Job job{kernel, tuner::ConfigSpace::load(space_path), {}};
    std::vector<tuner::NamedShape> shapes;
    if (!a.shapes_file.empty()) {
      const tuner::ShapeSet set = tuner::load_shape_set(tuner::resolve_config_file(a.shapes_file, "shapes"));
      shapes = set.shapes;
    }
    for (const auto& text : a.shapes) {
      const cache::Shape s = cache::Shape::parse(text).normalized(desc->dims);
      shapes.push_back({"", s.dims()});
    }
    if (shapes.empty()) shapes = preset_shapes;
    if (shapes.empty())
      throw Error(ErrorKind::kBadInput,
                  fmt::format("no shapes: give --shape {} or --shapes FILE", desc->example_shape()));
    for (const auto& d : dtypes)
      for (const auto& s : shapes)
        job.keys.push_back({kernel, s.normalized(job.space.dims()), d, key_layout});
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

nlohmann::json key_json(const tuner::KeySummary& s) {
  nlohmann::json j{{"kernel", s.kernel},
                   {"shape", s.shape},
                   {"label", s.label},
                   {"dtype", s.dtype},
                   {"layout", s.layout},
                   {"space_points", s.space_points},
                   {"candidates", s.candidates},
                   {"unmeasurable", s.unmeasurable},
                   {"seeds", s.seeds},
                   {"seed_rejected", s.seed_rejected},
                   {"evaluations", s.evaluations},
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
  } else {
    j["winner"] = nullptr;
  }
  if (!s.error.empty()) j["error"] = s.error;
  return j;
}

std::string key_line(const tuner::KeySummary& s) {
  std::string counts;
  for (const auto& [outcome, n] : s.outcomes)
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, outcome);
  std::string line = fmt::format("{} {} {} {}: ", s.kernel, s.shape, s.dtype, s.layout);
  if (!s.error.empty()) return line + "error: " + s.error;
  if (s.winner)
    line +=
        fmt::format("winner {} {:.3f} us{}", *s.winner, s.winner_median_us, s.winner_kept ? " (kept)" : "");
  else
    line += "no winner (compile-only)";
  return line + fmt::format(" [{} evaluated: {}; {} from the cache]", s.evaluations, counts, s.from_cache);
}

void run_tune(const TuneArgs& a) {
  const auto started = std::chrono::steady_clock::now();
  if (a.compile_only && a.arch.empty())
    throw Error(ErrorKind::kBadInput, "--compile-only needs --arch sm_XX (e.g. sm_90)");
  if (!a.compile_only && !a.arch.empty())
    throw Error(ErrorKind::kBadInput, "--arch goes with --compile-only");
  tuner::TuneOptions options;
  options.timing = finish_timing_options(a.timing);
  options.retune = a.retune;
  options.compile_only = a.compile_only;
  options.counters = !a.no_counters;
  options.compile_threads = a.compile_threads;
  options.device = a.device;
  std::vector<Job> jobs = plan_jobs(a, options);

  cache::GpuInfo gpu;
  std::string device_text;
  if (a.compile_only) {
    const tuner::ArchLimits limits = tuner::arch_limits(a.arch);
    harness::require_nvrtc_arch(a.arch);  // exit 2 listing NVRTC's architectures, not a sweep of errors
    options.arch = a.arch;
    options.limits = limits.limits;
    gpu = tuner::compile_only_gpu(a.arch, limits);
    device_text = fmt::format("compile-only for {} (limits of {})", a.arch, limits.device);
  } else {
    harness::DeviceInfo dev;
    try {
      dev = harness::query_device(a.device);
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
    options.limits = tuner::device_limits(dev);
    gpu = {dev.name, dev.cc_major, dev.cc_minor, dev.sm_count, dev.memory_bytes, "{}"};
    device_text = fmt::format("{} ({}), device {}", dev.name, dev.arch(), a.device);
  }

  const auto path = db_path(a.db);
  auto db = open_for_writing(path);
  std::ostream& human = human_out(a.json);
  tuner::Progress progress(std::cerr, tuner::Progress::stderr_wants_progress());
  size_t total = 0;
  for (const Job& job : jobs)
    for (const auto& key : job.keys) {
      try {
        total += tuner::planned_evaluations(job.space, key, options);
      } catch (const Error&) {
        // reported per key by the loop
      }
    }
  progress.begin(total);
  if (!a.json)
    progress.message(fmt::format(
        "tuning on {}: {} key(s), about {} evaluations, strategy {}", device_text,
        [&] {
          size_t n = 0;
          for (const Job& j : jobs) n += j.keys.size();
          return n;
        }(),
        total, tuner::to_string(options.strategy)));

  cache::RunInfo run;
  run.host = host_name();
  run.ktune_version = KTUNE_VERSION_STRING;
  run.arguments =
      fmt::format("tune kernels={} preset={} strategy={} budget={} compile_only={} retune={}", a.kernels,
                  a.preset, tuner::to_string(options.strategy), options.budget, a.compile_only, a.retune);
  if (!a.compile_only) run.driver_version = std::to_string(harness::query_device(a.device).driver_version);

  const auto sources = kernel_templates::SourceLibrary::from_environment();
  std::unique_ptr<tuner::RunnerMeasurer> measurer;
  if (!a.compile_only) measurer = std::make_unique<tuner::RunnerMeasurer>(a.device);
  // cuBLAS baselines of gemm keys, in this process (no GPU is touched before the first one).
  std::unique_ptr<tuner::CublasBaselineMeasurer> baseline;
  if (!a.compile_only) baseline = std::make_unique<tuner::CublasBaselineMeasurer>(a.device);
  std::vector<tuner::KeySummary> summaries;
  int compile_hits = 0;
  int compile_misses = 0;
  for (Job& job : jobs) {
    tuner::CacheCompileStore store(db, job.kernel,
                                   sources.hash(kernel_templates::kernel_source_files(job.kernel)));
    harness::NvrtcCompiler compiler(&store);
    tuner::LoopDeps deps{[&compiler](const harness::CompileRequest& r) { return compiler.compile(r); },
                         measurer.get(), &sources, &progress, baseline.get()};
    {
      tuner::TuningLoop loop(db, gpu, run, options, deps);
      for (const auto& key : job.keys) {
        summaries.push_back(loop.tune(job.space, key));
        progress.message(key_line(summaries.back()));
      }
    }
    compile_hits += store.hits();
    compile_misses += store.misses();
  }
  progress.finish();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  size_t failed = 0;
  for (const auto& s : summaries) failed += s.error.empty() ? 0 : 1;
  if (a.json) {
    nlohmann::json doc{{"db", path.string()},
                       {"gpu", gpu.name},
                       {"arch", options.arch},
                       {"compile_only", a.compile_only},
                       {"strategy", tuner::to_string(options.strategy)},
                       {"budget", options.budget},
                       {"wall_s", wall_s},
                       {"compile_cache", {{"hits", compile_hits}, {"misses", compile_misses}}},
                       {"keys", nlohmann::json::array()}};
    for (const auto& s : summaries) doc["keys"].push_back(key_json(s));
    print_json(doc);
  } else {
    if (!progress.enabled())
      for (const auto& s : summaries) human << key_line(s) << "\n";
    human << fmt::format("{} key(s) in {:.1f} s; compile cache {} hit(s), {} compile(s); database {}\n",
                         summaries.size(), wall_s, compile_hits, compile_misses, path.string());
  }
  if (failed > 0) {
    throw Error(ErrorKind::kRuntime,
                fmt::format("{} of {} key(s) could not be tuned (see above)", failed, summaries.size()));
  }
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto a = std::make_shared<TuneArgs>();
  auto* cmd =
      app.add_subcommand("tune", "Tune kernels for this GPU and store every measurement and the winners");
  auto* kernel = cmd->add_option("--kernel", a->kernels, "Kernel(s) to tune, comma-separated (e.g. gemm)");
  auto* preset = cmd->add_option("--preset", a->preset,
                                 "A tuning job from configs/presets (quick, llm-decode, llm-prefill)");
  kernel->excludes(preset);
  preset->excludes(kernel);
  auto* shapes = cmd->add_option("--shapes", a->shapes_file, "Shape set: a file or a name in configs/shapes");
  cmd->add_option("--shape", a->shapes, "A problem shape, e.g. m=16,n=4096,k=4096 (repeatable)")
      ->excludes(shapes);
  cmd->add_option("--dtype", a->dtypes, "Element type(s), comma-separated (default bf16, or the preset's)");
  cmd->add_option("--layout", a->layout,
                  "Layout or mode of each kernel, part of the key (default: the kernel's; see below)")
      ->type_name("TEXT");
  cmd->add_option("--space", a->space, "Config space file (default configs/spaces/<kernel>.toml)");
  cmd->add_option("--strategy", a->strategy, "Search strategy: exhaustive, random, halving or model");
  cmd->add_option("--budget", a->budget, "Measurements per (shape, dtype); 0 = no limit")
      ->check(CLI::Validator(
          [](const std::string& v) {
            return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos
                       ? std::string()
                       : "must be a whole number >= 0 (0 = no limit), not '" + v + "'";
          },
          "N"));
  cmd->add_option("--search-seed", a->search_seed, "Seed of the random and model-guided strategies");
  cmd->add_option("--device", a->device, "CUDA device ordinal")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  add_db_option(*cmd, a->db);
  cmd->add_flag("--compile-only", a->compile_only,
                "Compile every candidate and record resources; needs no GPU");
  cmd->add_option("--arch", a->arch, "Target architecture for --compile-only, e.g. sm_90");
  cmd->add_flag("--retune", a->retune, "Measure again configs the database already holds for the key");
  cmd->add_flag("--no-counters", a->no_counters, "Skip the CUPTI counter pass of the re-timed contenders");
  cmd->add_option("--compile-threads", a->compile_threads, "NVRTC threads (0 = one per core)")
      ->capture_default_str();
  add_json_flag(*cmd, a->json);
  add_timing_flags(*cmd, a->timing);
  cmd->footer(
      "Examples:\n"
      "  ktune tune --preset quick\n"
      "  ktune tune --kernel gemm --shape m=16,n=4096,k=4096 --dtype bf16 --strategy exhaustive --budget "
      "200\n"
      "  ktune tune --kernel gemm --shapes llama3-8b --dtype bf16,f16 --strategy halving --json\n"
      "  ktune tune --preset quick --compile-only --arch sm_90      # no GPU needed\n"
      "  ktune tune --kernel fp8_gemm --shape m=16,n=4096,k=4096 --dtype fp8e4m3 --layout nt+rowcol\n"
      "Layouts (gemm: B as [N,K] (nt, nn.Linear) or [K,N] (nn), then +bias/+silu epilogues; "
      "fp8_gemm: per-tensor (nt) or row x column (nt+rowcol) scales; operators: their mode) and "
      "each kernel's default; another value exits 2:\n" +
      layouts_help());
  cmd->callback([a] { run_tune(*a); });
}

}  // namespace ktune::cli
