#pragma once
/// The tuning loop (D6, D7): for one (kernel, shape, dtype, layout) it enumerates and prunes the
/// space, drives a search strategy, compiles the proposed candidates with NVRTC on a pool of threads
/// AHEAD of the GPU (cubins through the compile cache), has each one measured in the worker
/// (verified against the reference, timed), and writes every result to the ConfigCache as it
/// arrives. Failed configs are stored with their outcome and reason. A killed sweep resumes: a
/// config already measured for the key is answered from the cache (unless `retune`). At the end the
/// best few are re-timed interleaved, CUPTI counters are read for them, pick_winner's tie rule names
/// the winner, and set_best records it.
///
/// `compile_only` needs no GPU: every candidate is compiled for `arch` and stored with its resources
/// as `skipped` (reason "compile-only"), or as `compile_error` / `exceeds_limits` (against `limits`).
///
/// The compiler and the measurer are injected (LoopDeps), so tests run the whole loop without a GPU.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/config_cache.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "measure/timing_options.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/loop/candidate_measurer.hpp"
#include "tuner/search/search_strategy.hpp"
#include "tuner/space/config_space.hpp"
#include "tuner/space/resource_limits.hpp"

namespace ktune::tuner {

class Progress;
class BaselineMeasurer;
class LibraryAlgorithms;
namespace detail {
struct KeyContext;
}  // namespace detail

/// One (kernel, shape, dtype, layout) to tune.
struct TuneKey {
  std::string kernel;         ///< e.g. "gemm"
  NamedShape shape;           ///< in any order; normalised to the space's dims
  DType dtype = DType::kF32;  ///< one the kernel supports
  std::string layout;         ///< "nt" / "nn" for gemm, "" where the kernel has none
};

struct TuneOptions {
  std::string strategy = "model";  ///< a name of strategies() (tuner/search/search_strategy.hpp)
  size_t budget = 0;               ///< measurements a key (0 = no limit)
  uint64_t seed = StrategyOptions{}.seed;
  bool retune = false;        ///< measure again what the cache already holds
  bool compile_only = false;  ///< compile and record resources; no GPU
  std::string arch = "sm_90";
  DeviceLimits limits;  ///< enumeration constraints and exceeds_limits
  measure::TimingOptions timing;
  int device = 0;
  /// Workers measuring candidates in parallel, one per entry (`ktune tune --devices`): identical
  /// GPUs. Empty: `device` alone. The first entry is `device`, which re-times the contenders and
  /// runs the cuBLAS baseline, so a winner never depends on which card measured it.
  std::vector<int> devices;
  /// Library algorithms a key (tuner/library/library_candidates.hpp); nullopt: the space's
  /// `library_algorithms`. Needs LoopDeps::library.
  std::optional<size_t> library_algorithms;
  /// Read CUPTI counters for the re-timed contenders (the worker says when they are unavailable).
  bool counters = true;
  /// Medians within this fraction of the fastest tie, and pick_winner's rule decides (fewer
  /// resources, then name). 1 %: twice the protocol's 0.5 % target RSE of a median.
  double tie_noise = 0.01;
  /// Compile threads; 0 = one per core.
  size_t compile_threads = 0;
  /// Candidates compiled ahead of the GPU; 0 = twice the compile threads.
  size_t lookahead = 0;
  /// Most launches a candidate's plan may have to enter a measured search (0 = no limit, the
  /// default: the harness times a plan's whole launch sequence, so split-K configs are measured
  /// like any other). A limit leaves longer plans out, counted as `unmeasurable`; compile-only
  /// sweeps keep them.
  size_t max_launches = 0;
};

/// The outside world the loop uses.
struct LoopDeps {
  /// Compiles one request (thread-safe); throws ktune::Error on a compile error (detail = the log).
  std::function<harness::CompileResult(const harness::CompileRequest&)> compile;
  /// Measures candidates; may be null when compile_only.
  CandidateMeasurer* measurer = nullptr;
  /// Template sources (built-in or overlaid); must outlive the loop.
  const kernel_templates::SourceLibrary* sources = nullptr;
  /// Optional progress display.
  Progress* progress = nullptr;
  /// Measures the cuBLAS baseline stored once per gemm key (tuner/library/baseline_measurement.hpp); null:
  /// no baseline is stored (compile-only sweeps, tests with a fake measurer).
  BaselineMeasurer* baseline = nullptr;
  /// A stop request (a signal handler sets it; may be null). Once set, the loop proposes nothing
  /// new, stores what was compiled or measured, drops candidates compiled but not yet measured,
  /// and ends the key without naming a winner (KeySummary::stopped): a later run resumes it.
  const std::atomic<bool>* stop = nullptr;
  /// The library's algorithms for a key (null: no library candidates; compile-only sweeps have none).
  LibraryAlgorithms* library = nullptr;
};

/// What happened for one key.
struct KeySummary {
  std::string kernel;
  std::string shape;  ///< canonical
  std::string label;  ///< the shape's label ("llama3-8b.q_proj.m16", or "" when given by hand)
  DType dtype = DType::kF32;
  std::string layout;
  uint64_t space_points = 0;  ///< before pruning
  size_t candidates = 0;      ///< kept by the constraints (and measurable)
  size_t unmeasurable = 0;    ///< kept by the constraints but left out: more launches than a max_launches set
  size_t seeds = 0;           ///< the space's seeds this key uses (evaluated first)
  size_t seed_rejected = 0;   ///< seeds dropped for this key (constraints, layout, spec, arch)
  size_t sibling_seeds = 0;   ///< winners of the shape's other layouts, evaluated before the seeds
  size_t library_candidates =
      0;  ///< of `evaluations`, the library algorithms (tuner/library/library_candidates.hpp)
  size_t evaluations = 0;                  ///< results the strategy received
  size_t measured = 0;                     ///< of which measured (or compiled) in this run
  size_t from_cache = 0;                   ///< of which answered from the cache
  std::map<std::string, size_t> outcomes;  ///< outcome name -> evaluations with it
  std::optional<std::string> winner;       ///< canonical config name
  std::string winner_config_json;
  double winner_median_us = 0;
  bool winner_kept = false;   ///< nothing new was measured: the stored winner stands
  double compile_wait_s = 0;  ///< GPU side waiting for compiles
  double measure_s = 0;       ///< time in the measurer
  std::string error;          ///< why the key could not be tuned ("" when it was)
  bool stopped = false;       ///< a stop request ended the key before its winner was named
};

/// Planned evaluations of a key (for progress totals): the configs the space keeps, capped by the
/// budget. Throws what ConfigSpace::enumerate throws.
size_t planned_evaluations(const ConfigSpace& space, const TuneKey& key, const TuneOptions& options);

class TuningLoop {
 public:
  /// @param db   receives every result; not owned
  /// @param gpu  the GPU the results belong to (compile-only: a stand-in for the arch)
  /// @param run  this sweep's run row
  TuningLoop(cache::ConfigCache& db, const cache::GpuInfo& gpu, const cache::RunInfo& run,
             TuneOptions options, LoopDeps deps);
  ~TuningLoop();
  TuningLoop(const TuningLoop&) = delete;
  TuningLoop& operator=(const TuningLoop&) = delete;

  /// Tunes one key with `space` (whose kernel is key.kernel). A key that cannot be tuned (no config
  /// kept, nothing verified) returns a summary with `error` set; ktune::Error escapes only for what
  /// ends the whole sweep (no device, a database that cannot be written).
  KeySummary tune(const ConfigSpace& space, const TuneKey& key);

  int64_t run_id() const { return run_id_; }
  int64_t gpu_id() const { return gpu_id_; }

 private:
  struct KeyRun;  // one key's state, shared by the phases below (tuning_loop.cpp)

  /// Checks the key, enumerates and prunes its space, loads what the cache holds, starts the
  /// strategy; false (with s.error) when the key cannot be tuned.
  bool start_key(KeyRun& run);
  /// The space's configs for the key, pruned (constraints, max_launches) and with usable seeds.
  std::optional<Enumeration> enumerate_key(KeyRun& run, const NamedShape& shape);
  std::shared_ptr<detail::KeyContext> key_context(const KeyRun& run) const;
  /// Keeps the compile stage `lookahead` candidates ahead of the GPU (answering from the cache
  /// what it already holds); false when nothing is left in flight.
  bool fill_lookahead(KeyRun& run);
  /// Takes the front candidate once compiled (or, when it keeps the GPU waiting a while, a later
  /// compiled one) and every following one already compiled and needing no GPU into run.done;
  /// false (with s.error) when the key cannot go on.
  bool take_compiled(KeyRun& run);
  /// Whether a stop was requested (LoopDeps::stop).
  bool stopping() const { return deps_.stop != nullptr && deps_.stop->load(); }
  /// Measures run.done's candidates that need the GPU and records all of them in one transaction;
  /// after a stop request, those not yet measured are dropped.
  void measure_and_record(KeyRun& run);
  /// One evaluation's result to the summary, the strategy, the known successes and the progress.
  void note(KeyRun& run, const Candidate& c, const std::string& name, Outcome outcome,
            std::optional<double> us, int64_t id, const Resources& resources);
  /// note() without the strategy: the summary, the known successes and the progress.
  void tally(KeyRun& run, const Config& config, const std::string& name, Outcome outcome,
             std::optional<double> us, int64_t id, double fidelity, const Resources& resources);
  /// The library's best algorithms for the key (tuner/library/library_candidates.hpp), after the search:
  /// answered from the cache or measured in the worker, then contenders like any config
  /// (tuning_loop_library.cpp).
  void measure_library_candidates(KeyRun& run);
  /// The end of a key: re-time the best few interleaved, read their counters, name the winner.
  void finish_key(KeyRun& run);
  /// True when the key ends without a re-time: nothing succeeded (s.error), or nothing new was
  /// measured and the stored winner stands.
  bool keep_stored_winner(KeyRun& run);
  /// run.top re-timed interleaved (with counters when asked), as rows for the cache.
  std::vector<cache::Measurement> retime(KeyRun& run);
  /// The CUPTI counter pass of one re-timed contender into its row.
  void count(measure::CandidateRequest request, cache::Measurement& row);

  cache::ConfigCache& db_;
  cache::GpuInfo gpu_;
  TuneOptions options_;
  LoopDeps deps_;
  int64_t gpu_id_ = 0;
  int64_t run_id_ = 0;
  std::unique_ptr<class CompilePool> pool_;
};

}  // namespace ktune::tuner
