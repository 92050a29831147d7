#include "tests/cli/test_db_fixture.hpp"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "cache/config_cache.hpp"

namespace ktune::testing {
namespace {

struct Key {
  std::string gpu;
  std::string kernel;
  std::string shape;
  DType dtype;
  std::string layout;
};

cache::GpuInfo gpu_info(const std::string& name, std::mt19937_64& gen) {
  std::uniform_int_distribution<int> sms(20, 160);
  std::uniform_int_distribution<int64_t> gib(8, 141);
  return cache::GpuInfo{name, 9, 0, sms(gen), gib(gen) << 30, "{}"};
}

std::string hex(std::mt19937_64& gen) { return fmt::format("{:016x}", gen()); }

}  // namespace

const ExpectedBest& TestDb::find(const std::string& gpu, const std::string& kernel, const std::string& shape,
                                 const std::string& dtype) const {
  return find(gpu, kernel, shape, dtype, kernel == "gemm" ? "nt" : "");
}

const ExpectedBest& TestDb::find(const std::string& gpu, const std::string& kernel, const std::string& shape,
                                 const std::string& dtype, const std::string& layout) const {
  for (const auto& b : best) {
    if (b.gpu == gpu && b.kernel == kernel && b.shape == shape && b.dtype == dtype && b.layout == layout)
      return b;
  }
  throw std::logic_error("fixture has no key " + gpu + "/" + kernel + "/" + shape + "/" + dtype + "/" +
                         layout);
}

TestDb make_test_db(const std::filesystem::path& path, uint32_t seed, const std::string& gpu_suffix) {
  TestDb out;
  out.path = path;
  out.seed = seed;
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> median(5.0, 500.0);

  auto db = cache::ConfigCache::open(path);
  const std::string alpha = "Test GPU Alpha" + gpu_suffix;
  const std::string beta = "Test GPU Beta" + gpu_suffix;
  out.gpus = {alpha, beta};
  const std::vector<Key> keys = {
      {alpha, "gemm", "m=16,n=4096,k=4096", DType::kBF16, "nt"},
      {alpha, "gemm", "m=16,n=4096,k=4096", DType::kBF16, "nn"},
      {alpha, "gemm", "m=512,n=4096,k=4096", DType::kBF16, "nt"},
      {alpha, "rmsnorm", "rows=16,hidden=4096", DType::kF16, ""},
      {beta, "gemm", "m=64,n=1024,k=1024", DType::kBF16, "nt"},
  };

  cache::RunInfo run;
  run.host = "fixture-host";
  run.ktune_version = "0.1.0";
  run.arguments = fmt::format("make_test_db seed={}", seed);
  run.driver_version = "13000";
  run.cuda_version = "13.0";
  const int64_t run_id = db.begin_run(run);

  const std::string gemm_hash = hex(gen);
  const std::string rmsnorm_hash = hex(gen);
  for (const auto& key : keys) {
    const int64_t gpu_id = db.upsert_gpu(gpu_info(key.gpu, gen));
    const int64_t kernel_id =
        db.upsert_kernel(cache::KernelInfo{key.kernel, key.kernel == "gemm" ? gemm_hash : rmsnorm_hash});

    std::vector<cache::Measurement> ms;
    std::vector<int> tiles = {32, 64, 128, 256};
    std::shuffle(tiles.begin(), tiles.end(), gen);
    for (int i = 0; i < 4; ++i) {
      cache::Measurement m;
      m.shape = key.shape;
      m.dtype = key.dtype;
      m.layout = key.layout;
      m.config_name =
          fmt::format("{}.{}{}.t{}.s{}", key.kernel, to_string(key.dtype),
                      key.layout.empty() ? "" : "." + key.layout, tiles[static_cast<size_t>(i)], i + 2);
      m.config_json = fmt::format(R"({{"tile":{},"stages":{}}})", tiles[static_cast<size_t>(i)], i + 2);
      const double med = median(gen);
      m.stats = cache::Stats{med, med * 0.97, med * 1.01, med * 1.05, med * 0.02, 50 + i};
      ms.push_back(m);
    }
    // The last config is wrong and the fastest: it must never be named the winner.
    ms.back().outcome = ktune::Outcome::kIncorrect;
    ms.back().reason = "max relative error 0.31 > 0.02";
    ms.back().stats->median_us = ms.front().stats->median_us / 4;
    const auto ids = db.record(run_id, gpu_id, kernel_id, ms);
    out.measurements += static_cast<int64_t>(ids.size());

    size_t win = 0;
    for (size_t i = 1; i + 1 < ms.size(); ++i) {
      if (ms[i].stats->median_us < ms[win].stats->median_us) win = i;
    }
    db.set_best(ids[win]);
    out.best.push_back({key.gpu, key.kernel, key.shape, to_string(key.dtype), key.layout, ms[win].config_name,
                        ms[win].stats->median_us});
  }
  return out;
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() /
          fmt::format("ktune-e2e-{}-{:x}", ::getpid(), (uint64_t{rd()} << 32) | rd());
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace ktune::testing
