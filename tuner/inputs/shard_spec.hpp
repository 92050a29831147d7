#pragma once
/// Which shard of a sweep this process tunes: `--shard I/N` (0 <= I < N), or `--shard auto`, read
/// from a job array's environment:
///   - Slurm job arrays: SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, and SLURM_ARRAY_TASK_MIN /
///     SLURM_ARRAY_TASK_STEP for arrays that do not start at 0 or step by more than 1
///     (index = (ID - MIN) / STEP);
///   - Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX, with the count from `--shard-count N` or
///     $KTUNE_SHARD_COUNT (the Job's `completions`).
/// Which keys a shard holds is tuner/inputs/shard_plan.hpp.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace ktune::tuner {

struct ShardSpec {
  size_t index = 0;
  size_t count = 1;
  /// Where it came from, for messages: "--shard 3/8", "SLURM_ARRAY_TASK_ID=5 (array 2-9)", ...
  std::string source;

  /// "I/N".
  std::string text() const;
  bool whole() const { return count == 1; }
};

/// Reads an environment variable: its value, or nullopt when unset (tests pass their own).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
/// The process environment (getenv).
EnvLookup process_env();

/// `text` is "I/N" or "auto"; `shard_count` is `--shard-count` (only with auto). Throws
/// ktune::Error(kBadInput) naming the bad part: not I/N, N = 0, I >= N, auto with no array
/// index in the environment, a JOB_COMPLETION_INDEX without a count, a Slurm index outside its
/// array.
ShardSpec parse_shard(const std::string& text, std::optional<size_t> shard_count,
                      const EnvLookup& env = process_env());

}  // namespace ktune::tuner
