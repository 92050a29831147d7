// ktune_ops_bench: times a built-in sweep of each memory-bound operator on GPU 0 at the sizes of
// the performance record and prints, per (op, size), the best config's median time and its GB/s against the
// H200's 4.28 TB/s device-to-device copy ceiling (docs/perf/measurement.md), next to torch's numbers
// the record quotes. Runs before the tuning loop exists, so it is written against the harness
// primitives directly.
//
// Protocol per config: verified once against the GPU reference, on the GPU (a wrong config is
// reported and never wins); then timed by ktune's one timing path (measure/kernel_timer.hpp:
// warm-up, CUDA-graph batches of runs below 1 ms, the stopping rule with >= 30 samples), each
// sample after an L2 flush (--flush l2-clean, the default: a memset of 2x the L2 then a read of
// another 2x-L2 buffer, so no dirty line is left for the kernel to write back; --flush l2: the
// memset only). Reports the median; a plan of several launches (softmax SPLIT > 1) is timed as a
// whole. Inputs are filled on the GPU, so large sizes cost no
// host time. Each size's line is printed (and flushed) as soon as it is measured.
//
// Usage: ktune_ops_bench [--csv FILE] [--quick] [--filter TEXT]... [--wide] [--configs N]
//                        [--flush l2-clean|l2|none] [--verbose]
//   --filter TEXT: only sizes whose "op mode shape" contains TEXT (repeatable: any of them), e.g.
//                  --filter hidden=8192 --filter "softmax  rows=64,"
//   --wide:        a wider sweep for the large sizes (>= 64 MiB moved)
//   --configs N:   at most N configs a size (the sweep's first N)
//   --verbose:     a line for every config, not only the best

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
#include "harness/module.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/kernel_timer.hpp"
#include "measure/tolerance.hpp"
#include "measure/utility_kernels.hpp"
#include "measure/verification.hpp"
#include "ops_bench_device.hpp"
#include "ops_gpu_support.hpp"

namespace kt = ktune::kernel_templates;

using ktune::DType;

namespace {

constexpr double kCopyCeilingGBs = 4280.0;  // H200 device-to-device copy, docs/perf/measurement.md
constexpr int kMinSamples = 30;

struct Size {
  std::string op;
  kt::Problem problem;
  std::string target;  // what to beat, from the performance record (docs/perf/operators.md)
};

ktune::Config cfg(const char* variant, std::vector<std::pair<const char*, int64_t>> params) {
  ktune::Config c;
  c.variant = variant;
  for (const auto& [k, v] : params) c.set(k, v);
  return c;
}

/// The default sweep of `op`; `wide` adds more thread counts, rows a block, items and modes (for
/// the large sizes).
std::vector<ktune::Config> sweep(const std::string& op, DType dtype, bool wide) {
  const int64_t v16 = 16 / static_cast<int64_t>(ktune::size_of(dtype));
  std::vector<ktune::Config> out;
  if (op == "rmsnorm") {
    const int64_t tr[][2] = {{32, 4}, {32, 8}, {64, 4}, {128, 1}, {128, 2}, {256, 1}, {512, 1}, {1024, 1}};
    const int64_t wide_tr[][2] = {{64, 1},  {64, 2},  {64, 8},  {128, 4},
                                  {128, 8}, {256, 2}, {256, 4}, {512, 2}};
    for (const auto& x : tr) {
      for (int64_t reg : {1, 0}) {
        out.push_back(cfg("rowwise", {{"THREADS", x[0]}, {"ROWS", x[1]}, {"VEC", v16}, {"REG", reg}}));
      }
    }
    if (wide) {
      for (const auto& x : wide_tr) {
        for (int64_t reg : {1, 0})
          out.push_back(cfg("rowwise", {{"THREADS", x[0]}, {"ROWS", x[1]}, {"VEC", v16}, {"REG", reg}}));
      }
      for (int64_t t : {256, 512, 1024})
        out.push_back(cfg("rowwise", {{"THREADS", t}, {"ROWS", 1}, {"VEC", v16 / 2}, {"REG", 1}}));
    }
    // The bulk variant (sm_90; the spec drops rows that are not 16-byte multiples): {THREADS,
    // STAGES, STEPS, WRITE}.
    const int64_t bulk[][4] = {{256, 3, 4, 1}, {512, 3, 4, 0}, {256, 2, 4, 0},
                               {256, 3, 8, 0}, {512, 3, 8, 1}, {256, 2, 2, 0}};
    const int64_t wide_bulk[][4] = {{256, 3, 2, 1},  {256, 3, 1, 1},  {512, 3, 2, 0}, {512, 3, 1, 0},
                                    {256, 3, 2, 0},  {128, 3, 2, 0},  {512, 2, 2, 0}, {512, 3, 2, 1},
                                    {256, 2, 8, 0},  {512, 2, 4, 0},  {256, 4, 4, 1}, {512, 4, 8, 0},
                                    {1024, 3, 4, 0}, {1024, 2, 2, 0}, {128, 2, 4, 0}, {256, 3, 16, 0}};
    auto add_bulk = [&](const int64_t* x) {
      out.push_back(cfg("bulk", {{"THREADS", x[0]}, {"STAGES", x[1]}, {"STEPS", x[2]}, {"WRITE", x[3]}}));
    };
    for (const auto& x : bulk) add_bulk(x);
    if (wide) {
      for (const auto& x : wide_bulk) add_bulk(x);
    }
  } else if (op == "softmax") {
    // {THREADS, ROWS, ONLINE, SPLIT}; staged (ONLINE 2) and split rows (SPLIT > 1) are rejected by
    // the spec where they do not apply (rows over 227 KB, many rows).
    const int64_t tros[][4] = {{32, 4, 0, 1},   {128, 1, 0, 1}, {256, 1, 0, 1}, {512, 1, 0, 1},
                               {1024, 1, 0, 1}, {256, 1, 1, 1}, {512, 1, 1, 1}, {1024, 1, 1, 1},
                               {128, 2, 0, 1},  {64, 4, 0, 1},  {256, 1, 2, 1}, {512, 1, 2, 1},
                               {1024, 1, 2, 1}, {256, 1, 1, 8}, {512, 1, 1, 8}, {256, 1, 1, 16}};
    const int64_t wide_tros[][4] = {{128, 1, 2, 1},  {128, 1, 1, 1},  {256, 1, 1, 4},  {512, 1, 1, 4},
                                    {256, 1, 1, 32}, {512, 1, 1, 16}, {1024, 1, 1, 8}, {128, 1, 1, 16}};
    auto add = [&](const int64_t* x) {
      out.push_back(cfg(
          "rowwise", {{"THREADS", x[0]}, {"ROWS", x[1]}, {"VEC", v16}, {"ONLINE", x[2]}, {"SPLIT", x[3]}}));
    };
    for (const auto& x : tros) add(x);
    if (wide) {
      for (const auto& x : wide_tros) add(x);
    }
    // The cluster variant (sm_90; the spec drops it where a segment exceeds shared memory or the
    // row is not 16-byte units): {THREADS, CLUSTER}.
    const int64_t cl[][2] = {{512, 8}, {256, 8}, {1024, 8}, {512, 4}};
    const int64_t wide_cl[][2] = {{256, 4}, {1024, 4}, {512, 2}, {1024, 2}};
    for (const auto& x : cl) out.push_back(cfg("cluster", {{"THREADS", x[0]}, {"CLUSTER", x[1]}}));
    if (wide) {
      for (const auto& x : wide_cl) out.push_back(cfg("cluster", {{"THREADS", x[0]}, {"CLUSTER", x[1]}}));
    }
  } else if (op == "swiglu") {
    for (int64_t t : {128, 256, 512}) {
      for (int64_t items : {1, 2, 4})
        out.push_back(cfg("elementwise", {{"THREADS", t}, {"VEC", v16}, {"ITEMS", items}}));
    }
    if (wide) {
      for (int64_t t : {64, 1024}) {
        for (int64_t items : {1, 2, 4})
          out.push_back(cfg("elementwise", {{"THREADS", t}, {"VEC", v16}, {"ITEMS", items}}));
      }
      for (int64_t t : {128, 256, 512})
        out.push_back(cfg("elementwise", {{"THREADS", t}, {"VEC", v16}, {"ITEMS", 8}}));
    }
  } else {
    // {THREADS, HEADS, VEC, ITEMS, OCC}
    const int64_t lhvi[][5] = {
        {8, 8, 8, 1, 0},    {8, 16, 8, 1, 0},   {16, 8, 4, 1, 0},   {16, 16, 4, 1, 0},
        {32, 4, 2, 1, 0},   {32, 8, 2, 1, 0},   {4, 16, 8, 1, 0},   {4, 32, 8, 1, 0},
        {8, 8, 8, 2, 0},    {8, 8, 8, 4, 0},    {16, 8, 4, 2, 0},   {8, 16, 8, 2, 0},
        {8, 8, 8, 2, 1152}, {8, 8, 8, 2, 1280}, {8, 8, 8, 1, 1280}, {4, 16, 8, 2, 1280}};
    const int64_t wide_lhvi[][5] = {
        {8, 4, 8, 1, 0},     {8, 32, 8, 1, 0},    {16, 4, 4, 1, 0},    {16, 32, 4, 1, 0},
        {32, 16, 2, 1, 0},   {4, 8, 8, 1, 0},     {8, 4, 8, 2, 0},     {8, 32, 8, 2, 0},
        {16, 16, 4, 2, 0},   {16, 8, 4, 4, 0},    {8, 16, 8, 4, 0},    {4, 16, 8, 2, 0},
        {8, 16, 8, 2, 1152}, {8, 8, 8, 4, 1152},  {8, 8, 8, 4, 1024},  {16, 8, 4, 2, 1152},
        {8, 8, 8, 1, 1536},  {4, 16, 8, 2, 1152}, {8, 16, 8, 1, 1280}, {8, 32, 8, 2, 1024}};
    auto add = [&](const int64_t* x) {
      out.push_back(cfg("headwise",
                        {{"THREADS", x[0]}, {"HEADS", x[1]}, {"VEC", x[2]}, {"ITEMS", x[3]}, {"OCC", x[4]}}));
    };
    for (const auto& x : lhvi) add(x);
    if (wide) {
      for (const auto& x : wide_lhvi) add(x);
    }
    // The bulk variant (sm_90): {THREADS, STAGES, STEPS}.
    const int64_t bulk[][3] = {{256, 3, 4}, {512, 3, 4}, {256, 2, 4}, {256, 4, 8}};
    const int64_t wide_bulk[][3] = {{128, 3, 2}, {512, 2, 2}, {256, 3, 1}, {1024, 3, 4},
                                    {256, 3, 2}, {512, 4, 4}, {128, 4, 4}, {256, 6, 8}};
    for (const auto& x : bulk)
      out.push_back(cfg("bulk", {{"THREADS", x[0]}, {"STAGES", x[1]}, {"STEPS", x[2]}}));
    if (wide) {
      for (const auto& x : wide_bulk)
        out.push_back(cfg("bulk", {{"THREADS", x[0]}, {"STAGES", x[1]}, {"STEPS", x[2]}}));
    }
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
  auto swi = [&](int64_t m, int64_t i, const char* mode = "fused") {
    return Size{"swiglu", {{{"m", m}, {"i", i}}, b, mode}, ">=85% of copy"};
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
      rms(16384, 8192, "residual", ">=85% of copy"),
      rms(4096, 4095, "", "odd size"),
      smx(4096, 32768, "", "torch 2.2 TB/s"),
      smx(4096, 32768, "causal", "torch 2.2 TB/s"),
      smx(1, 32768, "", "latency"),
      smx(128, 4096, "", "latency"),
      smx(64, 262144, "", "online, long rows"),
      swi(1, 14336),
      swi(128, 14336),
      swi(4096, 14336),
      swi(16384, 14336),
      swi(16384, 14336, "split"),
      rope(1),
      rope(128),
      rope(4096),
      rope(16384),
  };
}

struct Options {
  std::string csv_path;
  bool quick = false;
  std::vector<std::string> filters;
  bool wide = false;
  std::size_t max_configs = 0;  // 0: all
  ktune::measure::FlushMode flush = ktune::measure::FlushMode::kL2Clean;
  bool verbose = false;
};

std::string label_of(const Size& s) { return s.op + " " + s.problem.layout + " " + s.problem.shape_text(); }

bool selected(const Size& s, const Options& o) {
  if (o.filters.empty()) return true;
  const std::string label = label_of(s);
  return std::any_of(o.filters.begin(), o.filters.end(),
                     [&](const std::string& f) { return label.find(f) != std::string::npos; });
}

/// The configs tried at size `s` on `arch`: the sweep (wide for >= 64 MiB moved), the spec's
/// rejections (of the problem or of the arch) dropped, at most max_configs.
std::vector<ktune::Config> configs_of(const Size& s, const Options& o, const std::string& arch) {
  constexpr double kLargeBytes = 64.0 * 1024 * 1024;
  const kt::KernelSpec& spec = *kt::specs_of(s.op).front();
  const bool wide = o.wide && spec.work(s.problem).min_bytes >= kLargeBytes;
  std::vector<ktune::Config> out;
  for (const auto& c : sweep(s.op, s.problem.dtype, wide)) {
    if (o.max_configs > 0 && out.size() >= o.max_configs) break;
    const kt::KernelSpec& variant = kt::find_spec(s.op, c.variant);
    if (!variant.rejection(s.problem, c) && !variant.arch_rejection(arch)) out.push_back(c);
  }
  return out;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--csv") == 0 && has_value) {
      o.csv_path = argv[++i];
    } else if (std::strcmp(argv[i], "--quick") == 0) {
      o.quick = true;
    } else if (std::strcmp(argv[i], "--filter") == 0 && has_value) {
      o.filters.emplace_back(argv[++i]);
    } else if (std::strcmp(argv[i], "--wide") == 0) {
      o.wide = true;
    } else if (std::strcmp(argv[i], "--configs") == 0 && has_value) {
      o.max_configs = static_cast<std::size_t>(std::max(0L, std::strtol(argv[++i], nullptr, 10)));
    } else if (std::strcmp(argv[i], "--flush") == 0 && has_value) {
      o.flush = ktune::measure::flush_mode_from_string(argv[++i]);
      if (o.flush == ktune::measure::FlushMode::kRotate)
        throw ktune::Error(ktune::ErrorKind::kBadInput, "--flush rotate: this bench keeps one buffer set");
    } else if (std::strcmp(argv[i], "--verbose") == 0) {
      o.verbose = true;
    } else {
      throw ktune::Error(
          ktune::ErrorKind::kBadInput,
          "usage: ktune_ops_bench [--csv FILE] [--quick] [--filter TEXT]... [--wide] [--configs N] "
          "[--flush l2-clean|l2|none] [--verbose]");
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options opt = parse_options(argc, argv);
    if (ktune::harness::device_count() < 1) throw ktune::Error(ktune::ErrorKind::kNoDevice, "no CUDA device");
    ktune::harness::PrimaryContext context(0);
    const auto info = ktune::harness::query_device(0);
    kt::testing::KernelCache kernels(info.arch());
    const ktune::measure::UtilityKernels utility(info.arch());
    auto& drv = ktune::harness::driver();
    CUstream stream = nullptr;
    KTUNE_CU_CHECK(drv.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    ktune::measure::TimingOptions timing;
    timing.flush = opt.flush;
    timing.min_samples = kMinSamples;
    ktune::measure::FlushPlan flush_plan;
    flush_plan.mode = opt.flush;
    const std::string flush_name(ktune::measure::to_string(opt.flush));
    std::printf("device: %s, L2 %lld MiB; ceiling %.0f GB/s (D2D copy); L2 flush: %s\n", info.name.c_str(),
                static_cast<long long>(info.l2_bytes >> 20), kCopyCeilingGBs, flush_name.c_str());

    std::vector<Size> all;
    for (const auto& s : sizes()) {
      if (!selected(s, opt)) continue;
      if (opt.quick && std::any_of(all.begin(), all.end(), [&](const Size& f) { return f.op == s.op; }))
        continue;
      all.push_back(s);
    }
    for (const Size& s : all) {  // compile everything up front, on every core
      const kt::KernelSpec& spec = *kt::specs_of(s.op).front();
      for (const auto& c : configs_of(s, opt, info.arch()))
        kernels.prefetch(kt::find_spec(s.op, c.variant).compile_spec(s.problem, c));
      kernels.prefetch(spec.reference(s.problem).compile);
    }

    std::ofstream csv;
    if (!opt.csv_path.empty()) {
      csv.open(opt.csv_path);
      csv << "op,mode,shape,dtype,config,median_us,gbps,pct_of_copy,launches_per_sample,verified,flush\n";
    }
    std::printf("\n%-13s %-9s %-38s %-38s %10s %9s %6s  %s\n", "op", "mode", "shape", "best config", "us",
                "GB/s", "%copy", "target");
    std::fflush(stdout);
    uint64_t seed = 1234;
    for (const Size& s : all) {
      const kt::KernelSpec& spec = *kt::specs_of(s.op).front();
      const kt::ReferenceSpec ref = spec.reference(s.problem);
      kt::testing::DeviceTensors tensors;
      kt::testing::fill_inputs_on_device(s.problem, ref.plan.tensors, tensors, utility, seed++, stream);
      kt::testing::run_plan(kernels, ref.compile, ref.plan, tensors);
      const double bytes = spec.work(s.problem).min_bytes;
      std::string best_name;
      double best_us = 0;
      int best_batch = 1;
      for (const ktune::Config& c : configs_of(s, opt, info.arch())) {
        const kt::KernelSpec& variant = kt::find_spec(s.op, c.variant);
        const std::string name = variant.canonical_name(s.problem, c);
        const kt::CompileSpec compile = variant.compile_spec(s.problem, c);
        const kt::LaunchPlan plan = variant.launch_plan(s.problem, c);
        for (const auto& t : plan.tensors) {
          tensors.ensure(t);
          if (t.role != kt::TensorRole::kInput) tensors.poison(t.name);
        }
        // The poison memsets run on the legacy default stream, which `stream` (non-blocking) does not
        // wait for.
        KTUNE_CU_CHECK(drv.cuCtxSynchronize());
        kt::testing::ReadyPlan r;
        try {
          r = kt::testing::prepare_plan(kernels, compile, plan, tensors);
        } catch (const ktune::Error& e) {
          std::printf("  FAILED %s @ %s: %s\n", name.c_str(), s.problem.shape_text().c_str(), e.what());
          continue;
        }
        r.enqueue(stream);
        bool ok = true;
        for (const auto& [out, ref_name] : ref.compare) {
          const auto v = kt::testing::verify_on_device(tensors, plan, out, ref.plan, ref_name,
                                                       s.problem.dtype, utility, stream);
          if (!v.ok) {
            std::printf("  INCORRECT %s @ %s: %s\n", name.c_str(), s.problem.shape_text().c_str(),
                        v.reason.c_str());
            ok = false;
          }
        }
        if (!ok) continue;
        ktune::measure::KernelTimer timer(timing, flush_plan, info.l2_bytes, stream, &utility);
        const ktune::measure::TimingResult timed = timer.time([&](std::size_t) { r.enqueue(stream); });
        const double us = timed.stats.median;
        const int batch = timed.launches_per_sample;
        if (best_name.empty() || us < best_us) {
          best_name = name;
          best_us = us;
          best_batch = batch;
        }
        const double gbs = bytes / us / 1e3;
        if (opt.verbose) {
          std::printf("  %-36s %10.2f us %7.0f GB/s %5.1f%%\n", name.c_str(), us, gbs,
                      100.0 * gbs / kCopyCeilingGBs);
          std::fflush(stdout);
        }
        if (csv.is_open()) {
          csv << s.op << "," << s.problem.layout << ",\"" << s.problem.shape_text() << "\",bf16," << name
              << "," << us << "," << gbs << "," << 100.0 * gbs / kCopyCeilingGBs << "," << batch << ",1,"
              << flush_name << "\n";
          csv.flush();
        }
      }
      KTUNE_CU_CHECK(drv.cuStreamSynchronize(stream));
      if (best_name.empty()) {
        std::printf("%-13s %-9s %-38s no config verified\n", s.op.c_str(), s.problem.layout.c_str(),
                    s.problem.shape_text().c_str());
      } else {
        const double gbs = bytes / best_us / 1e3;
        std::printf("%-13s %-9s %-38s %-38s %10.2f %9.0f %5.1f%%  %s%s\n", s.op.c_str(),
                    s.problem.layout.c_str(), s.problem.shape_text().c_str(), best_name.c_str(), best_us, gbs,
                    100.0 * gbs / kCopyCeilingGBs, s.target.c_str(), best_batch > 1 ? " (graph)" : "");
      }
      std::fflush(stdout);
    }
    KTUNE_CU_CHECK(drv.cuStreamDestroy(stream));
  } catch (const ktune::Error& e) {
    std::fprintf(stderr, "ktune_ops_bench: %s\n%s\n", e.what(), e.detail().c_str());
    return e.kind() == ktune::ErrorKind::kNoDevice ? 3 : e.kind() == ktune::ErrorKind::kBadInput ? 2 : 1;
  }
  return 0;
}
