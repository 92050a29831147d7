/// `ktune tune`: the offline sweep (docs/cli.md). For every (kernel, shape, dtype,
/// layout) the tuning loop (tuner/loop/tuning_loop.hpp) compiles candidates on a thread pool ahead of the
/// GPU, measures them in the worker, stores every result and names the winner. `--compile-only
/// --arch sm_XX` needs no GPU: it compiles every candidate and records resources and errors.

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "cli/kernel_dir_option.hpp"
#include "cli/layout_option.hpp"
#include "cli/output.hpp"
#include "cli/resume_command.hpp"
#include "cli/stop_signals.hpp"
#include "cli/timing_flags.hpp"
#include "harness/device_info.hpp"
#include "ktune/error.hpp"
#include "tuner/inputs/device_list.hpp"
#include "tuner/inputs/shard_plan.hpp"
#include "tuner/inputs/shard_spec.hpp"
#include "tuner/loop/progress.hpp"
#include "tuner/loop/tuning_session.hpp"

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
  std::string devices;  ///< "all" or "0,2,..."; "" = --device alone
  std::string db;
  bool compile_only = false;
  std::string arch;
  bool retune = false;
  bool no_counters = false;
  std::optional<size_t> library_algorithms;
  size_t compile_threads = 0;
  bool json = false;
  std::string shard;  ///< "I/N" or "auto"; "" = the whole sweep
  std::optional<size_t> shard_count;
  TimingFlags timing;
};

/// $KTUNE_TEST_WORKERS_PER_DEVICE: workers sharing each GPU of --devices. For tests only (their
/// timings disturb each other); 1 when unset.
int test_workers_per_device() {
  const char* v = std::getenv("KTUNE_TEST_WORKERS_PER_DEVICE");
  if (v == nullptr || *v == '\0') return 1;
  try {
    return std::stoi(v);
  } catch (const std::exception&) {
    throw Error(ErrorKind::kBadInput, std::string("KTUNE_TEST_WORKERS_PER_DEVICE is not a number: ") + v);
  }
}

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

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

tuner::SessionRequest session_request(const TuneArgs& a) {
  tuner::SessionRequest r;
  r.kernels = split_list(a.kernels);
  r.preset = a.preset;
  r.shapes_file = a.shapes_file;
  r.shapes = a.shapes;
  r.dtypes = split_list(a.dtypes);
  r.layout = a.layout;
  r.space = a.space;
  if (a.strategy) r.strategy = tuner::parse_strategy(*a.strategy);
  r.budget = a.budget;
  r.search_seed = a.search_seed;
  return r;
}

cache::RunInfo run_info(const TuneArgs& a, const tuner::TuneOptions& options,
                        const tuner::SessionTarget& target, const std::optional<tuner::ShardSpec>& shard) {
  cache::RunInfo run;
  run.host = host_name();
  run.ktune_version = KTUNE_VERSION_STRING;
  run.arguments =
      fmt::format("tune kernels={} preset={} strategy={} budget={} compile_only={} retune={}", a.kernels,
                  a.preset, options.strategy, options.budget, a.compile_only, a.retune);
  if (shard) run.arguments += " shard=" + shard->text();
  run.driver_version = target.driver_version;
  return run;
}

/// How a stopped sweep ended: the signal, what was done, and the command that resumes it.
struct StopReport {
  const char* signal = "";  ///< "" when the sweep was not stopped
  size_t keys_planned = 0;
  size_t keys_done = 0;  ///< keys whose tuning ended (a winner, or an error)
  std::string resume;
};

/// The shard this run tuned, for the output.
struct ShardReport {
  std::optional<tuner::ShardSpec> spec;
  tuner::ShardSelection selection;  ///< its jobs moved out

  nlohmann::json json() const {
    return {{"index", spec->index},
            {"count", spec->count},
            {"source", spec->source},
            {"keys", selection.keys},
            {"keys_total", selection.keys_total},
            {"cost", selection.cost},
            {"cost_total", selection.cost_total}};
  }
  std::string line() const {
    return fmt::format("shard {} ({}): {} of {} key(s), about {:.0f} of {:.0f} evaluations", spec->text(),
                       spec->source, selection.keys, selection.keys_total, selection.cost,
                       selection.cost_total);
  }
};

void print_result(const TuneArgs& a, const tuner::SessionResult& result, const tuner::SessionTarget& target,
                  const tuner::TuneOptions& options, const std::filesystem::path& path, double wall_s,
                  bool progress_shown, const StopReport& stop, const ShardReport& shard) {
  if (a.json) {
    nlohmann::json doc{{"db", path.string()},
                       {"gpu", target.gpu.name},
                       {"arch", options.arch},
                       {"compile_only", a.compile_only},
                       {"strategy", options.strategy},
                       {"budget", options.budget},
                       {"wall_s", wall_s},
                       {"compile_cache", {{"hits", result.compile_hits}, {"misses", result.compile_misses}}},
                       {"keys", nlohmann::json::array()}};
    for (const auto& s : result.keys) doc["keys"].push_back(tuner::summary_json(s));
    if (shard.spec) doc["shard"] = shard.json();
    if (*stop.signal != '\0') {
      doc["stopped"] = {{"signal", stop.signal},
                        {"keys_planned", stop.keys_planned},
                        {"keys_done", stop.keys_done},
                        {"resume", stop.resume}};
    }
    print_json(doc);
  } else {
    std::ostream& human = human_out(a.json);
    if (!progress_shown)
      for (const auto& s : result.keys) human << tuner::summary_line(s) << "\n";
    human << fmt::format("{} key(s) in {:.1f} s; compile cache {} hit(s), {} compile(s); database {}\n",
                         result.keys.size(), wall_s, result.compile_hits, result.compile_misses,
                         path.string());
  }
  if (*stop.signal != '\0') {
    // On stderr in both modes: a scheduler's log keeps it next to the signal's note.
    std::cerr << fmt::format(
        "ktune: stopped by {}: {} of {} key(s) done, everything measured so far is committed to {}\n"
        "ktune: to resume (in {}):\n  {}\n",
        stop.signal, stop.keys_done, stop.keys_planned, path.string(),
        std::filesystem::current_path().string(), stop.resume);
  }
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
  options.library_algorithms = a.library_algorithms;
  options.compile_threads = a.compile_threads;
  options.device = a.device;
  if (!a.devices.empty()) {
    if (a.compile_only)
      throw Error(ErrorKind::kBadInput, "--devices goes with measuring, not --compile-only");
    options.devices = tuner::parse_device_list(a.devices, harness::device_count(), test_workers_per_device());
    options.device = options.devices.front();
  }
  ShardReport shard;
  if (!a.shard.empty()) shard.spec = tuner::parse_shard(a.shard, a.shard_count);
  std::vector<tuner::SessionJob> jobs = tuner::plan_session(session_request(a), options);
  const tuner::SessionTarget target =
      a.compile_only ? tuner::compile_only_target(a.arch, options) : tuner::device_target(options);
  if (shard.spec) {
    // After the target: the keys' costs use its limits.
    shard.selection = tuner::select_shard(jobs, *shard.spec, options);
    jobs = std::move(shard.selection.jobs);
  }

  const auto path = db_path(a.db);
  auto db = open_for_writing(path);
  tuner::Progress progress(std::cerr, tuner::Progress::stderr_wants_progress());
  const size_t total = tuner::planned_evaluations(jobs, options);
  progress.begin(total);
  if (shard.spec) human_out(a.json) << shard.line() << "\n";
  if (!a.json)
    progress.message(fmt::format("tuning on {}: {} key(s), about {} evaluations, strategy {}",
                                 target.description, tuner::key_count(jobs), total, options.strategy));
  tuner::SessionHooks hooks;
  hooks.progress = &progress;
  hooks.on_key = [&progress](const tuner::KeySummary& s) { progress.message(tuner::summary_line(s)); };
  const StopSignals signals;  // SIGINT/SIGTERM: finish the running candidate, commit, exit 130/143
  hooks.stop = &signals.flag();
  const tuner::SessionResult result =
      tuner::run_session(db, target, run_info(a, options, target, shard.spec), jobs, options, hooks);
  progress.finish();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  StopReport stop;
  if (result.stopped) {
    stop.signal = signals.signal_name();
    stop.keys_planned = tuner::key_count(jobs);
    for (const auto& s : result.keys) stop.keys_done += s.stopped ? 0 : 1;
    stop.resume = resume_command(command_line(), {path.string(), shard.spec ? shard.spec->text() : ""});
  }
  print_result(a, result, target, options, path, wall_s, progress.enabled(), stop, shard);
  if (result.stopped) throw ExitStatus{signals.exit_code()};
  if (const size_t failed = result.failed(); failed > 0) {
    throw Error(ErrorKind::kRuntime,
                fmt::format("{} of {} key(s) could not be tuned (see above)", failed, result.keys.size()));
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
  auto* shapes = cmd->add_option(
      "--shapes", a->shapes_file,
      "Shape set (a file or a name in configs/shapes), or a key list: lines 'KERNEL SHAPE DTYPE [LAYOUT]' "
      "such as the runtime records with $KTUNE_RECORD_MISSES (each key then tuned with its own "
      "kernel, dtype and layout)");
  cmd->add_option("--shape", a->shapes, "A problem shape, e.g. m=16,n=4096,k=4096 (repeatable)")
      ->excludes(shapes);
  cmd->add_option("--dtype", a->dtypes, "Element type(s), comma-separated (default bf16, or the preset's)");
  cmd->add_option("--layout", a->layout,
                  "Layout or mode of each kernel, part of the key (default: the kernel's; see below)")
      ->type_name("TEXT");
  cmd->add_option(
      "--space", a->space,
      "Config space file (default configs/spaces/<kernel>.toml; a --kernel-dir kernel's is its NAME.toml)");
  std::string strategy_help = "Search strategy (default: the preset's, else model):";
  for (const auto& e : tuner::strategies()) strategy_help += "\n  " + e.name + ": " + e.help;
  cmd->add_option("--strategy", a->strategy, strategy_help);
  cmd->add_option("--budget", a->budget, "Measurements per (shape, dtype); 0 = no limit")
      ->check(CLI::Validator(
          [](const std::string& v) {
            return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos
                       ? std::string()
                       : "must be a whole number >= 0 (0 = no limit), not '" + v + "'";
          },
          "N"));
  cmd->add_option("--search-seed", a->search_seed, "Seed of the random and model-guided strategies");
  auto* device = cmd->add_option("--device", a->device, "CUDA device ordinal")
                     ->capture_default_str()
                     ->check(CLI::Range(0, 1024));
  cmd->add_option("--devices", a->devices,
                  "Measure on several identical GPUs at once: all, or a list such as 0,2 (one worker a GPU; "
                  "the best candidates are re-timed on the first)")
      ->excludes(device);
  add_kernel_dir_option(*cmd);
  add_db_option(*cmd, a->db);
  cmd->add_flag("--compile-only", a->compile_only,
                "Compile every candidate and record resources; needs no GPU");
  cmd->add_option("--arch", a->arch, "Target architecture for --compile-only, e.g. sm_90");
  cmd->add_flag("--retune", a->retune, "Measure again configs the database already holds for the key");
  cmd->add_flag("--no-counters", a->no_counters, "Skip the CUPTI counter pass of the re-timed contenders");
  cmd->add_option(
         "--library-algorithms", a->library_algorithms,
         "cuBLASLt algorithms (its heuristic's best first) measured beside the templates for each gemm "
         "key of layout nt or nn; they may win and are then dispatched through cuBLASLt "
         "(default: the space's library_algorithms, 8 for gemm; 0 = none)")
      ->check(CLI::Range(size_t{0}, static_cast<size_t>(tuner::kMaxLibraryAlgorithms)));
  cmd->add_option("--compile-threads", a->compile_threads, "NVRTC threads (0 = one per core)")
      ->capture_default_str();
  auto* shard = cmd->add_option(
      "--shard", a->shard,
      "Tune shard I of N (0 <= I < N), e.g. --shard 3/8: a fixed 1/N of the keys, balanced by estimated "
      "evaluations and the same on every machine; merge the shards' databases with `ktune cache merge`. "
      "auto: the index and count of a Slurm job array (SLURM_ARRAY_TASK_ID/_COUNT/_MIN) or a Kubernetes "
      "Indexed Job (JOB_COMPLETION_INDEX with --shard-count or $KTUNE_SHARD_COUNT)");
  shard->type_name("I/N|auto");
  cmd->add_option("--shard-count", a->shard_count,
                  "With --shard auto under a Kubernetes Indexed Job: the number of shards (the Job's "
                  "completions), e.g. --shard-count 8 (default $KTUNE_SHARD_COUNT)")
      ->type_name("N")
      ->needs(shard);
  add_json_flag(*cmd, a->json);
  add_timing_flags(*cmd, a->timing);
  cmd->footer(
      "Examples:\n"
      "  ktune tune --preset quick\n"
      "  ktune tune --kernel gemm --shape m=16,n=4096,k=4096 --dtype bf16 --strategy exhaustive --budget "
      "200\n"
      "  ktune tune --kernel gemm --shapes llama3-8b --dtype bf16,f16 --strategy halving --json\n"
      "  ktune tune --preset quick --compile-only --arch sm_90      # no GPU needed\n"
      "  ktune tune --preset llm-decode --shard 3/8 --db shard3.db  # then: ktune cache merge --db all.db "
      "shard*.db\n"
      "  ktune tune --preset llm-decode --shard auto --db shard-$SLURM_ARRAY_TASK_ID.db   # in a Slurm job "
      "array\n"
      "SIGINT/SIGTERM: the running candidate finishes, everything done is committed, the command that "
      "resumes is "
      "printed, and the exit code is 130/143.\n"
      "  ktune tune --kernel fp8_gemm --shape m=16,n=4096,k=4096 --dtype fp8e4m3 --layout nt+rowcol\n"
      "Layouts (gemm: B as [N,K] (nt, nn.Linear) or [K,N] (nn), then +bias/+silu epilogues; "
      "fp8_gemm: per-tensor (nt) or row x column (nt+rowcol) scales; operators: their mode) and "
      "each kernel's default; another value exits 2:\n" +
      layouts_help());
  cmd->callback([a] { run_tune(*a); });
}

}  // namespace ktune::cli
