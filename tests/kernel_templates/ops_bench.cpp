// ktune_ops_bench: times a small built-in sweep of each memory-bound operator on GPU 0 at the
// sizes of issue 6 and prints, per (op, size), the best config's median time and its GB/s against
// the H200's 4.28 TB/s device-to-device copy ceiling (shared/device/README.md), next to torch's
// numbers the issue quotes. Runs before the tuning loop exists, so it is written against the
// harness primitives directly.
//
// Protocol per config: verified once against the GPU reference (a wrong config is reported and
// never wins); 10 warm-up launches; then >= 30 samples, each after an L2 flush (a write of twice
// the L2 size); a kernel whose eager estimate is under 20 us is timed as a CUDA graph of launches
// worth >= 200 us and divided (eager launches cost ~4 us of host time there), so a sample of a
// short kernel is the graph-replayed time torch's figures also use. Reports the median.
//
// Usage: ktune_ops_bench [--csv FILE] [--quick]   (--quick: the first size of each op only)

#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gpu_plan_runner.hpp"
#include "harness/context.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "harness/l2_flush.hpp"
#include "harness/module.hpp"
#include "harness/timer.hpp"
#include "harness/tolerance.hpp"
#include "harness/verification.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "ops_gpu_support.hpp"

namespace kt = ktune::kernel_templates;
using ktune::harness::DType;

namespace {

constexpr double kCopyCeilingGBs = 4280.0;  // H200 device-to-device copy, shared/device/README.md
constexpr int kSamples = 30;
constexpr int kWarmup = 10;
constexpr double kGraphThresholdUs = 20.0;  // below this, eager timing sees launch gaps
constexpr double kGraphTargetUs = 200.0;

struct Size {
  std::string op;
  kt::Problem problem;
  std::string target;  // what to beat, from issue 6
};

kt::Config cfg(const char* variant, std::vector<std::pair<const char*, int64_t>> params) {
  kt::Config c;
  c.variant = variant;
  for (const auto& [k, v] : params) c.params[k] = v;
  return c;
}

std::vector<kt::Config> sweep(const std::string& op, DType dtype) {
  const int64_t v16 = 16 / static_cast<int64_t>(ktune::harness::size_of(dtype));
  std::vector<kt::Config> out;
  if (op == "rmsnorm") {
    const int64_t tr[][2] = {{32, 4}, {32, 8}, {64, 4}, {128, 1}, {128, 2}, {256, 1}, {512, 1}, {1024, 1}};
    for (const auto& x : tr) {
      for (int64_t reg : {1, 0}) {
        out.push_back(cfg("rowwise", {{"THREADS", x[0]}, {"ROWS", x[1]}, {"VEC", v16}, {"REG", reg}}));
      }
    }
  } else if (op == "softmax") {
    const int64_t tro[][3] = {{32, 4, 0},  {128, 1, 0}, {256, 1, 0},  {512, 1, 0}, {1024, 1, 0},
                              {256, 1, 1}, {512, 1, 1}, {1024, 1, 1}, {128, 2, 0}, {64, 4, 0}};
    for (const auto& x : tro) {
      out.push_back(cfg("rowwise", {{"THREADS", x[0]}, {"ROWS", x[1]}, {"VEC", v16}, {"ONLINE", x[2]}}));
    }
  } else if (op == "swiglu") {
    for (int64_t t : {128, 256, 512}) {
      for (int64_t items : {1, 2, 4})
        out.push_back(cfg("elementwise", {{"THREADS", t}, {"VEC", v16}, {"ITEMS", items}}));
    }
  } else {
    const int64_t lhv[][3] = {{8, 8, 8},  {8, 16, 8}, {16, 8, 4}, {16, 16, 4},
                              {32, 4, 2}, {32, 8, 2}, {4, 16, 8}, {4, 32, 8}};
    for (const auto& x : lhv)
      out.push_back(cfg("headwise", {{"THREADS", x[0]}, {"HEADS", x[1]}, {"VEC", x[2]}}));
  }
  return out;
}

std::vector<Size> sizes() {
  const DType b = DType::kBF16;
  auto rms = [&](int64_t rows, int64_t hidden, const char* mode, const char* target) {
    return Size{"rmsnorm", {{{"rows", rows}, {"hidden", hidden}}, b, mode}, target};
  };
  auto smx = [&](int64_t rows, int64_t cols, const char* mode, const char* target) {
    return Size{"softmax", {{{"rows", rows}, {"cols", cols}}, b, mode}, target};
  };
  auto swi = [&](int64_t m, int64_t i) {
    return Size{"swiglu", {{{"m", m}, {"i", i}}, b, "fused"}, ">=85% of copy"};
  };
  auto rope = [&](int64_t t) {
    return Size{"rmsnorm_rope",
                {{{"tokens", t}, {"heads_q", 32}, {"heads_kv", 8}, {"head_dim", 128}}, b, "neox"},
                ">=85% of copy"};
  };
  return {
      rms(1, 4096, "", "torch 4.2 us"),
      rms(128, 4096, "", "torch 7.7 us"),
      rms(4096, 4096, "", "torch 2.8 TB/s"),
      rms(4096, 4096, "residual", ">=85% of copy"),
      rms(16384, 8192, "", ">=85% of copy"),
      rms(4096, 4095, "", "odd size"),
      smx(4096, 32768, "", "torch 2.2 TB/s"),
      smx(4096, 32768, "causal", "torch 2.2 TB/s"),
      smx(1, 32768, "", "latency"),
      smx(128, 4096, "", "latency"),
      smx(64, 262144, "", "online, long rows"),
      swi(1, 14336),
      swi(128, 14336),
      swi(4096, 14336),
      rope(1),
      rope(128),
      rope(4096),
  };
}

/// A config ready to launch: its function and packed arguments.
struct Ready {
  CUfunction function = nullptr;
  kt::KernelLaunch launch;
  std::unique_ptr<kt::PackedArgs> args;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

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
      std::fprintf(stderr, "usage: ktune_ops_bench [--csv FILE] [--quick]\n");
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
    ktune::harness::L2Flusher flusher(info.l2_bytes, 2.0);
    std::printf("device: %s, L2 %lld MiB; ceiling %.0f GB/s (D2D copy)\n", info.name.c_str(),
                static_cast<long long>(info.l2_bytes >> 20), kCopyCeilingGBs);

    auto all = sizes();
    if (quick) {
      std::vector<Size> first;
      for (const auto& s : all) {
        if (std::none_of(first.begin(), first.end(), [&](const Size& f) { return f.op == s.op; }))
          first.push_back(s);
      }
      all = first;
    }
    for (const Size& s : all) {  // compile everything up front, on every core
      const kt::KernelSpec& spec = *kt::specs_of(s.op).front();
      for (const auto& c : sweep(s.op, s.problem.dtype)) {
        if (!spec.rejection(s.problem, c)) kernels.prefetch(spec.compile_spec(s.problem, c));
      }
      kernels.prefetch(spec.reference(s.problem).compile);
    }

    std::ofstream csv;
    if (!csv_path.empty()) {
      csv.open(csv_path);
      csv << "op,mode,shape,dtype,config,median_us,gbps,pct_of_copy,launches_per_sample,verified\n";
    }
    std::printf("\n%-13s %-9s %-38s %-34s %10s %9s %6s  %s\n", "op", "mode", "shape", "best config", "us",
                "GB/s", "%copy", "target");
    for (const Size& s : all) {
      const kt::KernelSpec& spec = *kt::specs_of(s.op).front();
      const kt::ReferenceSpec ref = spec.reference(s.problem);
      kt::testing::DeviceTensors tensors;
      kt::HostTensors host;
      kt::testing::fill_inputs(s.problem, ref.plan.tensors, tensors, host, 1234);
      kt::testing::run_plan(kernels, ref.compile, ref.plan, tensors);
      const double bytes = spec.work(s.problem).min_bytes;
      std::string best_name;
      double best_us = 0;
      int best_batch = 1;
      for (const kt::Config& c : sweep(s.op, s.problem.dtype)) {
        if (spec.rejection(s.problem, c)) continue;
        const std::string name = spec.canonical_name(s.problem, c);
        const kt::CompileSpec compile = spec.compile_spec(s.problem, c);
        const kt::LaunchPlan plan = spec.launch_plan(s.problem, c);
        for (const auto& t : plan.tensors) {
          tensors.ensure(t);
          if (t.role != kt::TensorRole::kInput) tensors.poison(t.name);
        }
        kt::testing::run_plan(kernels, compile, plan, tensors);
        bool ok = true;
        for (const auto& [out, ref_name] : ref.compare) {
          const auto got = kt::testing::download_values(
              tensors, plan.tensors[static_cast<std::size_t>(plan.tensor_index(out))]);
          const auto want = kt::testing::download_values(
              tensors, ref.plan.tensors[static_cast<std::size_t>(ref.plan.tensor_index(ref_name))]);
          const auto v = ktune::harness::judge(ktune::harness::compare(got, want),
                                               ktune::harness::tolerance_for(s.problem.dtype));
          if (!v.ok) {
            std::printf("  INCORRECT %s @ %s: %s\n", name.c_str(), s.problem.shape_text().c_str(),
                        v.reason.c_str());
            ok = false;
          }
        }
        if (!ok) continue;
        std::vector<uint64_t> ptrs;
        for (const auto& t : plan.tensors) ptrs.push_back(tensors.ptr(t.name));
        Ready r;
        r.launch = plan.launches.front();
        r.function = kernels.function(compile, r.launch.name_expression);
        r.args = std::make_unique<kt::PackedArgs>(plan, r.launch, ptrs);
        const auto& d = r.launch.dims;
        auto enqueue = [&] {
          ktune::harness::launch(r.function, {d.grid.x, d.grid.y, d.grid.z},
                                 {d.block.x, d.block.y, d.block.z}, d.dynamic_smem_bytes, stream,
                                 r.args->data());
        };
        for (int i = 0; i < kWarmup; ++i) enqueue();
        ktune::harness::EventTimer timer(stream);
        std::vector<double> eager;
        for (int i = 0; i < 5; ++i) {
          flusher.flush(stream);
          eager.push_back(timer.time_us(enqueue));
        }
        int batch = 1;
        std::unique_ptr<ktune::harness::GraphBatch> graph;
        if (median(eager) < kGraphThresholdUs) {
          batch = std::max(10, static_cast<int>(kGraphTargetUs / std::max(median(eager), 1.0)));
          graph = std::make_unique<ktune::harness::GraphBatch>(stream, batch, [&](int) { enqueue(); });
          graph->launch();
        }
        std::vector<double> samples;
        for (int i = 0; i < kSamples; ++i) {
          flusher.flush(stream);
          samples.push_back(graph ? timer.time_us([&] { graph->launch(); }) / batch : timer.time_us(enqueue));
        }
        const double us = median(samples);
        if (best_name.empty() || us < best_us) {
          best_name = name;
          best_us = us;
          best_batch = batch;
        }
        if (csv.is_open()) {
          csv << s.op << "," << s.problem.layout << ",\"" << s.problem.shape_text() << "\",bf16," << name
              << "," << us << "," << bytes / us / 1e3 << "," << 100.0 * bytes / us / 1e3 / kCopyCeilingGBs
              << "," << batch << ",1\n";
        }
      }
      KTUNE_CU_CHECK(drv.cuStreamSynchronize(stream));
      if (best_name.empty()) {
        std::printf("%-13s %-9s %-38s no config verified\n", s.op.c_str(), s.problem.layout.c_str(),
                    s.problem.shape_text().c_str());
        continue;
      }
      const double gbs = bytes / best_us / 1e3;
      std::printf("%-13s %-9s %-38s %-34s %10.2f %9.0f %5.1f%%  %s%s\n", s.op.c_str(),
                  s.problem.layout.c_str(), s.problem.shape_text().c_str(), best_name.c_str(), best_us, gbs,
                  100.0 * gbs / kCopyCeilingGBs, s.target.c_str(), best_batch > 1 ? " (graph)" : "");
      std::fflush(stdout);
    }
    KTUNE_CU_CHECK(drv.cuStreamDestroy(stream));
  } catch (const ktune::Error& e) {
    std::fprintf(stderr, "ktune_ops_bench: %s\n%s\n", e.what(), e.detail().c_str());
    return e.kind() == ktune::ErrorKind::kNoDevice ? 3 : 1;
  }
  return 0;
}
