#include "tuner/inputs/shard_spec.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::tuner {
namespace {

/// A whole number in [0, 2^31) from `text`; nullopt when it is anything else.
std::optional<size_t> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (v >= (1ULL << 31)) return std::nullopt;
  return static_cast<size_t>(v);
}

/// The variable `name` as a whole number; throws naming it when set to anything else.
std::optional<size_t> env_number(const EnvLookup& env, const std::string& name) {
  const auto value = env(name);
  if (!value) return std::nullopt;
  const auto n = whole_number(*value);
  if (!n)
    throw Error(ErrorKind::kBadInput,
                fmt::format("--shard auto: {}='{}' is not a whole number", name, *value));
  return n;
}

ShardSpec checked(size_t index, size_t count, std::string source) {
  if (count == 0)
    throw Error(ErrorKind::kBadInput, fmt::format("{}: the shard count must be at least 1", source));
  if (index >= count) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("{}: shard index {} is not below the shard count {} (indices run 0..{})", source,
                            index, count, count - 1));
  }
  return {index, count, std::move(source)};
}

ShardSpec from_slurm(const EnvLookup& env, size_t id, std::optional<size_t> shard_count) {
  const auto count = env_number(env, "SLURM_ARRAY_TASK_COUNT");
  const size_t min = env_number(env, "SLURM_ARRAY_TASK_MIN").value_or(0);
  const size_t step = env_number(env, "SLURM_ARRAY_TASK_STEP").value_or(1);
  if (!count) {
    throw Error(
        ErrorKind::kBadInput,
        fmt::format("--shard auto: SLURM_ARRAY_TASK_ID={} is set but SLURM_ARRAY_TASK_COUNT is not", id));
  }
  if (shard_count && *shard_count != *count) {
    throw Error(ErrorKind::kBadInput, fmt::format("--shard-count {} disagrees with SLURM_ARRAY_TASK_COUNT={}",
                                                  *shard_count, *count));
  }
  if (step == 0 || id < min || (id - min) % step != 0) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("--shard auto: SLURM_ARRAY_TASK_ID={} is not in an array starting at "
                            "SLURM_ARRAY_TASK_MIN={} with step {}; give --shard I/N",
                            id, min, step));
  }
  std::string source = fmt::format("SLURM_ARRAY_TASK_ID={} (array from {}", id, min);
  if (step != 1) source += fmt::format(" step {}", step);
  source += fmt::format(", {} tasks)", *count);
  return checked((id - min) / step, *count, std::move(source));
}

}  // namespace

std::string ShardSpec::text() const { return fmt::format("{}/{}", index, count); }

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

ShardSpec parse_shard(const std::string& text, std::optional<size_t> shard_count, const EnvLookup& env) {
  if (text != "auto") {
    if (shard_count) throw Error(ErrorKind::kBadInput, "--shard-count goes with --shard auto");
    const auto slash = text.find('/');
    const std::string source = "--shard " + text;
    if (slash == std::string::npos) {
      throw Error(
          ErrorKind::kBadInput,
          fmt::format("{}: expected I/N (this is shard I of N, 0 <= I < N, e.g. 3/8) or auto", source));
    }
    const auto index = whole_number(text.substr(0, slash));
    const auto count = whole_number(text.substr(slash + 1));
    if (!index)
      throw Error(ErrorKind::kBadInput,
                  fmt::format("{}: the index '{}' is not a whole number", source, text.substr(0, slash)));
    if (!count)
      throw Error(ErrorKind::kBadInput,
                  fmt::format("{}: the count '{}' is not a whole number", source, text.substr(slash + 1)));
    return checked(*index, *count, source);
  }
  if (shard_count && *shard_count == 0)
    throw Error(ErrorKind::kBadInput, "--shard-count 0: the shard count must be at least 1");
  if (const auto id = env_number(env, "SLURM_ARRAY_TASK_ID")) return from_slurm(env, *id, shard_count);
  if (const auto index = env_number(env, "JOB_COMPLETION_INDEX")) {
    std::optional<size_t> count = shard_count;
    std::string count_source = "--shard-count";
    if (!count) {
      count = env_number(env, "KTUNE_SHARD_COUNT");
      count_source = "KTUNE_SHARD_COUNT";
    }
    if (!count) {
      throw Error(
          ErrorKind::kBadInput,
          fmt::format("--shard auto: JOB_COMPLETION_INDEX={} but no shard count: give --shard-count N "
                      "or set KTUNE_SHARD_COUNT (the Indexed Job's completions)",
                      *index));
    }
    return checked(*index, *count,
                   fmt::format("JOB_COMPLETION_INDEX={} ({} {})", *index, count_source, *count));
  }
  throw Error(ErrorKind::kBadInput,
              "--shard auto found no array index in the environment: it reads SLURM_ARRAY_TASK_ID and "
              "SLURM_ARRAY_TASK_COUNT (a Slurm job array) or JOB_COMPLETION_INDEX with --shard-count N or "
              "KTUNE_SHARD_COUNT (a Kubernetes Indexed Job); elsewhere give --shard I/N");
}

}  // namespace ktune::tuner
