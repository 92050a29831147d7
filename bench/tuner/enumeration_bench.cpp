// Enumerating and pruning a config space of ~100k points (8 x 8 x 5 x 5 x 5 x 4 x 5 = 160,000
// before the skinny GEMV template's 2,560), the cost paid once per (shape, dtype) before
// compiling; and the model-guided strategy's proposals on the kept configs. The kernel has no
// templates, so this measures the expressions alone (the specs' rules add their own cost).
#include <benchmark/benchmark.h>

#include "tuner/search/search_strategy.hpp"
#include "tuner/space/config_space.hpp"

namespace {

constexpr const char* kSpace = R"(
kernel = "bench_gemm"
dims = ["m", "n", "k"]

[[template]]
name = "tiled"
pattern = "{BLOCK_M}x{BLOCK_N}x{BLOCK_K}.w{WARPS_M}x{WARPS_N}.s{STAGES}.sk{SPLIT_K}"
[template.params]
BLOCK_M = { pow2 = [2, 256] }
BLOCK_N = { pow2 = [2, 256] }
BLOCK_K = { pow2 = [8, 128] }
WARPS_M = [1, 2, 4, 8, 16]
WARPS_N = [1, 2, 4, 8, 16]
STAGES = { start = 1, stop = 4 }
SPLIT_K = [1, 2, 4, 8, 16]
[template.derived]
threads = "WARPS_M * WARPS_N * warp_size"
smem_bytes = "(BLOCK_M + BLOCK_N) * BLOCK_K * elem_bytes * STAGES"
acc = "BLOCK_M * BLOCK_N / threads"
[template.constraints]
threads_fit = "threads <= max_threads_per_block"
smem_fits = "smem_bytes <= max_smem_per_block"
warp_tile_m = "BLOCK_M % (WARPS_M * 16) == 0"
warp_tile_n = "BLOCK_N % (WARPS_N * 16) == 0"
acc_fit = "acc <= 128"
split_k_fits = "SPLIT_K * BLOCK_K <= k"

[[template]]
name = "gemv"
pattern = "gemv.k{BLOCK_K}.sk{SPLIT_K}.w{WARPS}.r{ROWS}"
[template.params]
BLOCK_K = { pow2 = [64, 8192] }
SPLIT_K = { pow2 = [1, 128] }
WARPS = [1, 2, 4, 8, 16]
ROWS = [1, 2, 4, 8]
[template.constraints]
skinny = "m <= 16"
split_k_fits = "SPLIT_K * BLOCK_K <= k"
)";

ktune::tuner::ProblemContext context() {
  ktune::tuner::ProblemContext c;
  c.dims = {{"m", 16}, {"n", 4096}, {"k", 4096}};
  c.elem_bytes = 2;
  return c;
}

void BM_Parse(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ktune::tuner::ConfigSpace::parse(kSpace, "bench.toml"));
}
BENCHMARK(BM_Parse)->Unit(benchmark::kMicrosecond);

void BM_EnumerateAndPrune(benchmark::State& state) {
  const auto space = ktune::tuner::ConfigSpace::parse(kSpace, "bench.toml");
  const auto ctx = context();
  size_t kept = 0;
  for (auto _ : state) {
    const auto e = space.enumerate(ctx);
    kept = e.configs.size();
    benchmark::DoNotOptimize(kept);
  }
  state.counters["points"] = static_cast<double>(space.size());
  state.counters["kept"] = static_cast<double>(kept);
  state.counters["points/s"] =
      benchmark::Counter(static_cast<double>(space.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EnumerateAndPrune)->Unit(benchmark::kMillisecond);

void BM_ModelRound(benchmark::State& state) {
  const auto space = ktune::tuner::ConfigSpace::parse(kSpace, "bench.toml");
  const auto configs = space.enumerate(context()).configs;
  for (auto _ : state) {
    auto s = ktune::tuner::make_strategy("model", configs, {.budget = 64});
    double t = 1;
    while (!s->done()) {
      for (const auto& c : s->next_batch(8)) s->report(c.config, t += 0.37, c.fidelity);
    }
  }
  state.counters["candidates"] = static_cast<double>(configs.size());
}
BENCHMARK(BM_ModelRound)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
