// ktune_attn_bench: times a sweep of decode_attention configs on GPU 0 at the issue-6 sizes
// (Llama-3-8B heads 32/8 of 128 at batch 1, 8, 32 and context 4K, 32K, 128K; Llama-3.2-1B, head_dim
// 64, at batch 1 and 32) and prints, per size, the best config's median time and its GB/s (minimum
// bytes: K and V of the context read once, q read, o written) against the H200's 4.28 TB/s
// device-to-device copy ceiling (docs/perf/measurement.md).
//
// Protocol per config (as ktune_ops_bench): verified once against the GPU reference (a wrong config
// is reported and never wins); then timed by ktune's one timing path (measure/kernel_timer.hpp:
// warm-up, CUDA-graph batches of runs below 1 ms, the stopping rule with >= 30 samples), each
// sample after an L2 flush (a write of twice the L2 size). A run is every launch of the plan (split
// kernel + combine). The
// caches (up to 17 GB at batch 32, 128K) are filled by uploading 16 MiB of random values and
// doubling it on the device.
//
// Usage: ktune_attn_bench [--csv FILE] [--quick]   (--quick: the 4K sizes only)

#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu_plan_runner.hpp"
#include "harness/context.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "kernel_templates/decode_attention/decode_attention_spec.hpp"
#include "ktune/error.hpp"
#include "measure/kernel_timer.hpp"
#include "measure/tolerance.hpp"
#include "measure/verification.hpp"
#include "ops_gpu_support.hpp"

namespace kt = ktune::kernel_templates;

using ktune::DType;

namespace {

constexpr double kCopyCeilingGBs = 4280.0;  // H200 device-to-device copy, docs/perf/measurement.md
constexpr int kMinSamples = 30;
constexpr int64_t kFillChunkElems = 8 << 20;  // 16 MiB of bf16 uploaded, then doubled on the device

kt::Problem problem(int64_t batch, int64_t hq, int64_t hkv, int64_t seq, int64_t d) {
  return {{{"batch", batch}, {"heads_q", hq}, {"heads_kv", hkv}, {"seq", seq}, {"head_dim", d}},
          DType::kBF16,
          ""};
}

std::vector<kt::Problem> sizes(bool quick) {
  std::vector<kt::Problem> out;
  for (int64_t seq : {4096, 32768, 131072}) {
    if (quick && seq != 4096) continue;
    for (int64_t b : {1, 8, 32}) out.push_back(problem(b, 32, 8, seq, 128));
    for (int64_t b : {1, 32}) out.push_back(problem(b, 32, 8, seq, 64));
  }
  return out;
}

/// The space's configs (configs/spaces/decode_attention.toml, its usefulness rules included) the
/// spec accepts.
std::vector<ktune::Config> sweep(const kt::DecodeAttentionSpec& spec, const kt::Problem& p, int sm_count) {
  std::vector<ktune::Config> out;
  const int64_t blocks = p.dim("batch") * (p.dim("heads_q") / kt::DecodeAttentionSpec::heads_per_block(p));
  for (int64_t n : {16, 32, 64, 128}) {
    for (int64_t w : {2, 4, 8}) {
      for (int64_t sk : {1, 2, 4, 8, 16, 32, 64, 128}) {
        const ktune::Config c{"splitkv", {{"BLOCK_N", n}, {"WARPS", w}, {"SPLIT_K", sk}}};
        if (spec.rejection(p, c)) continue;
        if (sk > 1 && (sk * n * 4 > p.dim("seq") || blocks * sk > 8 * sm_count)) continue;
        out.push_back(c);
      }
    }
  }
  return out;
}

/// Fills input tensor `t` with random values: one chunk uploaded, then doubled device to device.
void fill_random(const kt::testing::DeviceTensors& tensors, const kt::TensorSpec& t, uint64_t seed) {
  auto& drv = ktune::harness::driver();
  std::vector<double> ignored;
  const int64_t first = std::min(t.elements, kFillChunkElems);
  const auto bytes = kt::testing::random_tensor(t.dtype, first, seed, ignored);
  const CUdeviceptr base = tensors.ptr(t.name);
  KTUNE_CU_CHECK(drv.cuMemcpyHtoD(base, bytes.data(), bytes.size()));
  const auto total = static_cast<std::size_t>(t.bytes());
  std::size_t filled = bytes.size();
  while (filled < total) {
    const std::size_t n = std::min(filled, total - filled);
    KTUNE_CU_CHECK(drv.cuMemcpyDtoD(base + filled, base, n));
    filled += n;
  }
}

/// A plan ready to launch: each launch's function and packed arguments.
struct Ready {
  std::vector<CUfunction> functions;
  std::vector<kt::KernelLaunch> launches;
  std::vector<std::unique_ptr<kt::PackedArgs>> args;
};

}  // namespace

int main(int argc, char** argv) {
  std::string csv_path;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
      csv_path = argv[++i];
    } else if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: ktune_attn_bench [--csv FILE] [--quick]\n");
      return 2;
    }
  }
  try {
    if (ktune::harness::device_count() < 1) throw ktune::Error(ktune::ErrorKind::kNoDevice, "no CUDA device");
    ktune::harness::PrimaryContext context(0);
    const auto info = ktune::harness::query_device(0);
    kt::testing::KernelCache kernels(info.arch());
    auto& drv = ktune::harness::driver();
    CUstream stream = nullptr;
    KTUNE_CU_CHECK(drv.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    // The one timing path with an L2 flush before every sample (one buffer set).
    ktune::measure::TimingOptions timing;
    timing.flush = ktune::measure::FlushMode::kL2;
    timing.min_samples = kMinSamples;
    ktune::measure::FlushPlan flush_plan;
    flush_plan.mode = timing.flush;
    const kt::DecodeAttentionSpec spec;
    std::printf("device: %s, %d SMs, L2 %lld MiB; ceiling %.0f GB/s (D2D copy)\n", info.name.c_str(),
                info.sm_count, static_cast<long long>(info.l2_bytes >> 20), kCopyCeilingGBs);

    const auto all = sizes(quick);
    for (const auto& p : all) {  // compile everything up front, on every core
      for (const auto& c : sweep(spec, p, info.sm_count)) kernels.prefetch(spec.compile_spec(p, c));
      kernels.prefetch(spec.reference(p).compile);
    }
    std::ofstream csv;
    if (!csv_path.empty()) {
      csv.open(csv_path);
      csv << "shape,config,median_us,gbps,pct_of_copy,launches_per_sample,verified\n";
    }
    std::printf("\n%-58s %-36s %10s %9s %6s  %s\n", "shape", "best config", "us", "GB/s", "%copy", "default");
    for (const kt::Problem& p : all) {
      const kt::ReferenceSpec ref = spec.reference(p);
      kt::testing::DeviceTensors tensors;
      uint64_t seed = 99;
      for (const auto& t : ref.plan.tensors) {
        tensors.ensure(t);
        if (t.role == kt::TensorRole::kInput) {
          fill_random(tensors, t, seed++);
        } else {
          tensors.poison(t.name);
        }
      }
      kt::testing::run_plan(kernels, ref.compile, ref.plan, tensors);
      const auto want = kt::testing::download_values(
          tensors, ref.plan.tensors[static_cast<std::size_t>(ref.plan.tensor_index("o_ref"))]);
      const double bytes = spec.work(p).min_bytes;
      const std::string default_name = spec.canonical_name(p, spec.default_config(p));
      std::string best_name;
      double best_us = 0;
      int best_batch = 1;
      double default_us = 0;
      auto configs = sweep(spec, p, info.sm_count);
      if (std::none_of(configs.begin(), configs.end(),
                       [&](const ktune::Config& c) { return spec.canonical_name(p, c) == default_name; })) {
        configs.push_back(spec.default_config(p));
      }
      for (const ktune::Config& c : configs) {
        const std::string name = spec.canonical_name(p, c);
        const kt::CompileSpec compile = spec.compile_spec(p, c);
        const kt::LaunchPlan plan = spec.launch_plan(p, c);
        for (const auto& t : plan.tensors) {
          tensors.ensure(t);
          if (t.role != kt::TensorRole::kInput) tensors.poison(t.name);
        }
        kt::testing::run_plan(kernels, compile, plan, tensors);
        const auto got = kt::testing::download_values(
            tensors, plan.tensors[static_cast<std::size_t>(plan.tensor_index("o"))]);
        const auto v = ktune::measure::judge(ktune::measure::compare(got, want),
                                             ktune::measure::tolerance_for(DType::kBF16));
        if (!v.ok) {
          std::printf("  INCORRECT %s @ %s: %s\n", name.c_str(), p.shape_text().c_str(), v.reason.c_str());
          continue;
        }
        std::vector<uint64_t> ptrs;
        for (const auto& t : plan.tensors) ptrs.push_back(tensors.ptr(t.name));
        Ready r;
        for (const auto& l : plan.launches) {
          r.functions.push_back(kernels.function(compile, l.name_expression));
          r.launches.push_back(l);
          r.args.push_back(std::make_unique<kt::PackedArgs>(plan, r.launches.back(), ptrs));
        }
        auto enqueue = [&] {
          for (std::size_t i = 0; i < r.launches.size(); ++i) {
            const auto& d = r.launches[i].dims;
            ktune::harness::launch(r.functions[i], {d.grid.x, d.grid.y, d.grid.z},
                                   {d.block.x, d.block.y, d.block.z}, d.dynamic_smem_bytes, stream,
                                   r.args[i]->data());
          }
        };
        ktune::measure::KernelTimer timer(timing, flush_plan, info.l2_bytes, stream);
        const ktune::measure::TimingResult timed = timer.time([&](std::size_t) { enqueue(); });
        const double us = timed.stats.median;
        const int batch = timed.launches_per_sample;
        if (name == default_name) default_us = us;
        if (best_name.empty() || us < best_us) {
          best_name = name;
          best_us = us;
          best_batch = batch;
        }
        if (csv.is_open()) {
          csv << "\"" << p.shape_text() << "\"," << name << "," << us << "," << bytes / us / 1e3 << ","
              << 100.0 * bytes / us / 1e3 / kCopyCeilingGBs << "," << batch << ",1\n";
        }
      }
      KTUNE_CU_CHECK(drv.cuStreamSynchronize(stream));
      if (best_name.empty()) {
        std::printf("%-58s no config verified\n", p.shape_text().c_str());
        continue;
      }
      const double gbs = bytes / best_us / 1e3;
      std::printf("%-58s %-36s %10.2f %9.0f %5.1f%%  %s %.2f us%s\n", p.shape_text().c_str(),
                  best_name.c_str(), best_us, gbs, 100.0 * gbs / kCopyCeilingGBs, default_name.c_str(),
                  default_us, best_batch > 1 ? " (graph)" : "");
      std::fflush(stdout);
    }
    KTUNE_CU_CHECK(drv.cuStreamDestroy(stream));
  } catch (const ktune::Error& e) {
    std::fprintf(stderr, "ktune_attn_bench: %s\n%s\n", e.what(), e.detail().c_str());
    return e.kind() == ktune::ErrorKind::kNoDevice ? 3 : 1;
  }
  return 0;
}
