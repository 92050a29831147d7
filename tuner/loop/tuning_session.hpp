#pragma once
/// A tuning session: what `ktune tune` does, as the API that the command line, `ktune serve` and a
/// Slurm shard runner call. A request (kernels or a preset, shapes, dtypes, layout, space) becomes
/// jobs, one a kernel, each with its config space and keys (plan_session); a target (a GPU, or an
/// arch for compile-only sweeps) fills the options' arch and limits; run_session tunes every key
/// into an open ConfigCache through the tuning loop (tuner/loop/tuning_loop.hpp), reporting each key as
/// it ends and stopping after the running candidate when asked.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "tuner/loop/tuning_loop.hpp"
#include "tuner/space/config_space.hpp"

namespace ktune::tuner {

class Progress;

/// What to tune. Either `kernels` or `preset` (the preset gives the kernel, and the dtypes, layout,
/// strategy, budget, seed and shapes the request leaves out).
struct SessionRequest {
  std::vector<std::string> kernels;
  std::string preset;  ///< a name in configs/presets or a file
  /// A shape set (a name in configs/shapes or a file), or a key list (tuner/inputs/key_list.hpp: then
  /// its keys are the session's, each with its own kernel, dtype and layout; `kernels` or the
  /// preset's kernel only filter them, and `dtypes` / `layout` must be empty).
  std::string shapes_file;
  std::vector<std::string> shapes;  ///< shape texts, e.g. "m=16,n=4096,k=4096"
  /// Names as given (flags, a job's JSON), read for each kernel by plan_session, which names a
  /// dtype the kernel does not support; default: the preset's, else bf16.
  std::vector<std::string> dtypes;
  std::optional<std::string> layout;    ///< default: the preset's, else each kernel's default
  std::string space;                    ///< a space file; "" = configs/spaces/<kernel>.toml
  std::optional<std::string> strategy;  ///< a name of strategies()
  std::optional<size_t> budget;
  std::optional<uint64_t> search_seed;
};

/// One kernel's part of a session: its space and keys.
struct SessionJob {
  std::string kernel;
  ConfigSpace space;
  std::vector<TuneKey> keys;
};

/// The jobs of `request`; sets `options`' strategy, budget and seed (the preset's, overridden by
/// the request's). Throws ktune::Error(kBadInput) naming what is missing or unknown.
std::vector<SessionJob> plan_session(const SessionRequest& request, TuneOptions& options);

/// The GPU the results belong to, as the cache keys them, and a line that says what runs.
struct SessionTarget {
  cache::GpuInfo gpu;
  std::string description;     ///< "NVIDIA H200 (sm_90), device 0" or "compile-only for sm_90 (...)"
  std::string driver_version;  ///< "" for compile-only sweeps
};

/// A compile-only target for `arch` (no GPU): sets options.arch and the arch's limits.
SessionTarget compile_only_target(const std::string& arch, TuneOptions& options);
/// The GPU options.device: sets options.arch and its limits. Throws ktune::Error(kNoDevice) saying
/// that --compile-only needs no GPU when there is none.
SessionTarget device_target(TuneOptions& options);

/// Keys over all jobs.
size_t key_count(const std::vector<SessionJob>& jobs);
/// Evaluations planned over all keys (for a progress total); keys whose space cannot be enumerated
/// count 0 (the loop reports them).
size_t planned_evaluations(const std::vector<SessionJob>& jobs, const TuneOptions& options);

/// What a caller sees while a session runs.
struct SessionHooks {
  Progress* progress = nullptr;                   ///< the loop's progress display
  std::function<void(const KeySummary&)> on_key;  ///< after each key
  /// Set (by a signal handler): nothing new is proposed, the running candidate finishes (or is
  /// cut short after measure::RunnerOptions::stop_grace_ms), what is done is stored, and the
  /// session returns with `stopped` (the loop's LoopDeps::stop).
  const std::atomic<bool>* stop = nullptr;
};

struct SessionResult {
  std::vector<KeySummary> keys;  ///< one a key tuned, in order
  int compile_hits = 0;          ///< compile cache
  int compile_misses = 0;
  bool stopped = false;  ///< hooks.stop ended the session before its last key was done

  /// Keys that could not be tuned (KeySummary::error set).
  size_t failed() const;
};

/// Tunes every key of `jobs` into `db` on `target` (a worker process measures, cuBLAS baselines
/// are timed for gemm keys; neither for compile-only sweeps). ktune::Error escapes only for what
/// ends the whole session (no device, a database that cannot be written).
SessionResult run_session(cache::ConfigCache& db, const SessionTarget& target, const cache::RunInfo& run,
                          const std::vector<SessionJob>& jobs, const TuneOptions& options,
                          const SessionHooks& hooks = {});

/// A key's summary as JSON (the `keys` entries of `ktune tune --json`).
nlohmann::json summary_json(const KeySummary& s);
/// A key's summary as one line: "gemm m=16,... bf16 nt: winner ... [n evaluated: ...]".
std::string summary_line(const KeySummary& s);

}  // namespace ktune::tuner
