#pragma once
// Databases for the end-to-end tests of the command line and the C ABI, made with the
// ConfigCache API: a few GPUs, kernels, shapes and dtypes with random timings (never zero)
// and a known winner per key.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ktune::testing {

/// One key's winner as the fixture stored it.
struct ExpectedBest {
  std::string gpu;
  std::string kernel;
  std::string shape;  ///< canonical
  std::string dtype;
  std::string layout;  ///< "nt"/"nn" for gemm, "" for rmsnorm
  std::string config_name;
  double median_us = 0;
};

/// What a fixture database holds.
struct TestDb {
  std::filesystem::path path;
  uint32_t seed = 0;
  std::vector<std::string> gpus;   ///< GPU model names, in the order stored
  std::vector<ExpectedBest> best;  ///< every key's winner
  int64_t measurements = 0;        ///< rows written, all outcomes

  /// The winner for a key; fails the test (throws) when the fixture has none. `layout` defaults to
  /// the kernel's default layout as the fixture stores it ("nt" for gemm, "" otherwise).
  const ExpectedBest& find(const std::string& gpu, const std::string& kernel, const std::string& shape,
                           const std::string& dtype) const;
  /// The winner for a key with an explicit layout.
  const ExpectedBest& find(const std::string& gpu, const std::string& kernel, const std::string& shape,
                           const std::string& dtype, const std::string& layout) const;
};

/// Writes a database at `path` (which must not exist) from `seed`. `gpu_suffix` makes GPU names
/// distinct between two fixtures, so merges have rows of both. Contents, for GPU
/// "Test GPU Alpha<suffix>": gemm bf16 layout "nt" at m=16 and m=512 (n=k=4096), gemm bf16 layout
/// "nn" at m=16,n=4096,k=4096 (its own winner), rmsnorm f16 layout "" at rows=16,hidden=4096; for
/// "Test GPU Beta<suffix>": gemm bf16 "nt" at m=64,n=1024,k=1024. Every key has four configs (one
/// of them incorrect, faster than the rest, so it must never win); config names carry the layout.
TestDb make_test_db(const std::filesystem::path& path, uint32_t seed, const std::string& gpu_suffix = "");

/// A fresh folder under the temp dir, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace ktune::testing
