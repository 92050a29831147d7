#pragma once
// Helpers shared by the cache tests: a temporary folder, random GPUs/kernels/measurements, file bytes.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cache/config_cache.hpp"

namespace ktune::cache::testing {

/// A fresh folder under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("ktune-cache-test-{}-{:x}", ::getpid(), (uint64_t{rd()} << 32) | rd());
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    for (const auto& e : std::filesystem::recursive_directory_iterator(path_, ec)) {
      if (e.is_directory(ec)) std::filesystem::permissions(e.path(), std::filesystem::perms::owner_all, ec);
    }
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// A seeded generator; the seed is printed with every failure of the test that made it, and
/// KTUNE_TEST_SEED=<seed> replays it.
class Rng {
 public:
  Rng() : seed_(initial_seed()), gen_(seed_) {}
  uint32_t seed() const { return seed_; }
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen_); }
  bool coin() { return uniform(0, 1) == 1; }
  std::string word(size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += static_cast<char>('a' + uniform(0, 25));
    return s;
  }
  std::string hex(size_t n) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; ++i) s += kHex[uniform(0, 15)];
    return s;
  }
  std::mt19937_64& gen() { return gen_; }

 private:
  static uint32_t initial_seed() {
    if (const char* s = std::getenv("KTUNE_TEST_SEED"))
      return static_cast<uint32_t>(std::strtoul(s, nullptr, 10));
    return std::random_device{}();
  }
  uint32_t seed_;
  std::mt19937_64 gen_;
};

inline GpuInfo random_gpu(Rng& r) {
  return GpuInfo{"NVIDIA " + r.word(6),
                 static_cast<int>(r.uniform(7, 10)),
                 static_cast<int>(r.uniform(0, 9)),
                 static_cast<int>(r.uniform(20, 160)),
                 r.uniform(8, 141) << 30,
                 fmt::format(R"({{"copy_gbps":{:.1f}}})", r.real(500, 5000))};
}

inline KernelInfo random_kernel(Rng& r) { return KernelInfo{"k_" + r.word(5), r.hex(16)}; }

inline std::string random_shape(Rng& r) {
  return fmt::format("m={},n={},k={}", r.uniform(1, 1 << 16), r.uniform(1, 1 << 16), r.uniform(1, 1 << 16));
}

/// A timed, ok measurement with random statistics (never zero).
inline Measurement random_measurement(Rng& r, const std::string& shape, DType dtype) {
  Measurement m;
  m.shape = shape;
  m.dtype = dtype;
  const int64_t bm = 16 << r.uniform(0, 4);
  const int64_t bn = 16 << r.uniform(0, 4);
  const int64_t stages = r.uniform(2, 5);
  m.config_name = fmt::format("gemm.{}.{}x{}.s{}.{}", to_string(dtype), bm, bn, stages, r.word(4));
  m.config_json = fmt::format(R"({{"bm":{},"bn":{},"stages":{}}})", bm, bn, stages);
  const double median = r.real(1.5, 900.0);
  m.stats = Stats{median,
                  median * r.real(0.8, 0.99),
                  median * r.real(1.0, 1.1),
                  median * r.real(1.01, 1.3),
                  median * r.real(0.001, 0.05),
                  r.uniform(10, 500)};
  m.counters_json = fmt::format(R"({{"dram_bytes_read":{}}})", r.uniform(1, 1 << 30));
  m.resources_json =
      fmt::format(R"({{"registers":{},"smem":{}}})", r.uniform(16, 255), r.uniform(1, 227) * 1024);
  if (r.coin()) m.sm_clock_mhz = r.real(1000, 1980);
  if (r.coin()) m.temperature_c = r.real(30, 85);
  return m;
}

/// A failed measurement with a random outcome other than ok.
inline Measurement random_failure(Rng& r, const std::string& shape, DType dtype) {
  Measurement m = random_measurement(r, shape, dtype);
  m.outcome = static_cast<Outcome>(r.uniform(1, 7));
  m.reason = "failed: " + r.word(12);
  m.stats.reset();
  return m;
}

inline std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline RunInfo random_run(Rng& r) {
  return RunInfo{"",
                 "host-" + r.word(4),
                 "0.1." + std::to_string(r.uniform(0, 9)),
                 "ktune tune --kernel x",
                 "580." + std::to_string(r.uniform(1, 99)),
                 "13.0"};
}

}  // namespace ktune::cache::testing
