// Host-side costs of the measurement harness: what the protocol and the statistics add per
// candidate and per sample (GPU kernels are benchmarked with `ktune bench`).
#include <random>
#include <string>

#include <benchmark/benchmark.h>

#include "measure/candidate.hpp"
#include "measure/stopping_rule.hpp"
#include "measure/worker_protocol.hpp"

namespace ktune::measure {
namespace {

CandidateRequest request_with_cubin(std::size_t cubin_bytes) {
  CandidateRequest r;
  r.name = "gemm.bf16.nt.128x128x32.w2x2.s3.sk1";
  r.buffers = {{"a", DType::kBF16, 1 << 24, BufferSpec::Init::kFill, BufferFill::random(1.0)},
               {"c", DType::kBF16, 1 << 24, BufferSpec::Init::kPoison}};
  LaunchSpec& gemm = r.launches.emplace_back();
  gemm.cubin.assign(cubin_bytes, '\x5a');
  gemm.function = "_Z4gemmILi128ELi128ELi32EEvPK13__nv_bfloat16PS0_iii";
  gemm.args = {KernelArg::buf("a"), KernelArg::buf("c"), KernelArg::i32(4096)};
  return r;
}

// Parent side of one candidate: request to JSON, frame it; worker side: decode, parse.
void BM_RequestRoundTrip(benchmark::State& state) {
  const CandidateRequest r = request_with_cubin(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    Message out{MessageType::kMeasure, {}, {}};
    out.body = to_json(r, &out.attachment);
    const std::string frame = encode_frame(out);
    FrameDecoder d;
    d.feed(frame);
    auto m = d.next();
    CandidateRequest back = candidate_request_from_json(m->body, &m->attachment);
    benchmark::DoNotOptimize(back.launches.front().cubin.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RequestRoundTrip)->Arg(64 << 10)->Arg(1 << 20);

// Per-sample cost of the stopping rule (add + check) over a 1000-sample run.
void BM_StoppingRule1000(benchmark::State& state) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(100, 20);
  std::vector<double> samples(1000);
  for (double& s : samples) s = noise(rng);
  TimingOptions o;
  o.max_samples = 1000;
  o.max_time_ms = 1e9;
  for (auto _ : state) {
    StoppingRule rule(o);
    for (double s : samples) {
      rule.add(s);
      benchmark::DoNotOptimize(rule.check(0));
    }
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_StoppingRule1000);

}  // namespace
}  // namespace ktune::measure

BENCHMARK_MAIN();
