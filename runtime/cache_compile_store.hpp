#pragma once
/// The compile cache of D6 as a harness::CompileStore: NvrtcCompiler asks it before compiling and
/// hands it every new cubin, and it keeps them in the ConfigCache's compile_cache table, so a
/// second sweep (or the dispatch runtime) of the same source, options, arch and NVRTC version
/// loads the cubin instead of compiling. Thread-safe (the compile pool's threads share it).

#include <atomic>
#include <optional>
#include <string>

#include "cache/config_cache.hpp"
#include "harness/nvrtc_compiler.hpp"

namespace ktune::runtime {

class CacheCompileStore final : public harness::CompileStore {
 public:
  /// @param db          not owned; must outlive the store
  /// @param kernel_name recorded with each artifact (so `ktune cache prune` can drop stale ones)
  /// @param source_hash the kernel's template source hash, recorded likewise
  /// @param writable    false: find() only (a read-only database); store() keeps nothing
  CacheCompileStore(cache::ConfigCache& db, std::string kernel_name = {}, std::string source_hash = {},
                    bool writable = true);

  std::optional<harness::CompileResult> find(const std::string& key) override;
  /// Best effort: a failed write (e.g. a read-only file) is counted, not thrown: the compile
  /// itself succeeded and the sweep goes on.
  void store(const std::string& key, const harness::CompileResult& result) override;

  int hits() const noexcept { return hits_.load(); }
  int misses() const noexcept { return misses_.load(); }
  int failed_stores() const noexcept { return failed_stores_.load(); }

 private:
  cache::ConfigCache& db_;
  std::string kernel_name_;
  std::string source_hash_;
  bool writable_;
  std::atomic<int> hits_{0};
  std::atomic<int> misses_{0};
  std::atomic<int> failed_stores_{0};
};

/// CompileResult <-> CompiledArtifact (lowered names and resources as JSON text).
cache::CompiledArtifact to_artifact(const std::string& key, const harness::CompileResult& result);
harness::CompileResult from_artifact(const cache::CompiledArtifact& artifact);

}  // namespace ktune::runtime
