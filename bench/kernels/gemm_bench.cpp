// ktune_gemm_bench: the tensor-core template (gemm_mma.cu) against cuBLASLt on the linear layers of
// real models, before the tuning loop exists. For every shape it times a small built-in sweep of
// mma configs chosen by the shape's class (decode M <= 16, mid M <= 256, large M) and cuBLASLt, both
// timed by ktune's one timing path (measure/kernel_timer.hpp: warm-up, inputs rotated over copies
// larger than twice the L2, CUDA-graph batches below 1 ms, the stopping rule with at least
// --samples samples). Every config's output is checked against cuBLASLt's. Prints per shape:
// TFLOP/s and GB/s of both, the best config, the ratio; then the geomean ratios of M <= 16 and
// M >= 512.
//
//   ktune_gemm_bench [--models llama3-8b,qwen2.5-7b] [--m 1,16,128,512,2048,4096] [--dtype bf16]
//                    [--layout nt] [--samples 20] [--layers q_proj,...] [--csv FILE] [--verbose]

#include <fmt/format.h>
#include <toml++/toml.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <future>
#include <map>
#include <memory>

#include "gemm_bench_sweep.hpp"
#include "harness/context.hpp"
#include "harness/cublaslt_gemm.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/gpu_compare.hpp"
#include "measure/kernel_timer.hpp"
#include "measure/random_fill.hpp"
#include "measure/statistics.hpp"
#include "measure/tolerance.hpp"

namespace kt = ktune::kernel_templates;
namespace h = ktune::harness;
namespace m = ktune::measure;

namespace {

struct Shape {
  std::string label;  // "llama3-8b.q_proj.m16"
  int64_t m, n, k;
};

std::vector<Shape> load_shapes(const std::string& dir, const std::vector<std::string>& models,
                               const std::vector<std::string>& layers, const std::vector<int64_t>& ms) {
  std::vector<Shape> out;
  for (const auto& model : models) {
    const std::string path = dir + "/" + model + ".toml";
    toml::table t;
    try {
      t = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
      throw ktune::Error(ktune::ErrorKind::kBadInput, fmt::format("{}: {}", path, e.description()));
    }
    const auto* entries = t["layer"].as_array();
    if (!entries) throw ktune::Error(ktune::ErrorKind::kBadInput, path + ": no [[layer]]");
    for (const auto& e : *entries) {
      const auto& l = *e.as_table();
      const std::string name = l["name"].value_or(std::string{});
      if (!layers.empty() && std::find(layers.begin(), layers.end(), name) == layers.end()) continue;
      for (int64_t m : ms) {
        out.push_back({fmt::format("{}.{}.m{}", model, name, m), m, l["n"].value_or(int64_t{0}),
                       l["k"].value_or(int64_t{0})});
      }
    }
  }
  return out;
}

/// A compiled config: its module and functions by name expression.
struct Compiled {
  h::Module module;
  std::map<std::string, CUfunction> functions;
  std::map<std::string, h::KernelResources> resources;
  std::string error;
};

std::string spec_key(const kt::CompileSpec& c) {
  std::string k = c.source_name;
  for (const auto& e : c.name_expressions) k += "|" + e;
  return k;
}

/// One timing by ktune's one timing path (measure/kernel_timer.hpp): median microseconds of a launch.
double time_launches(const std::function<void(int set)>& enqueue, const m::FlushPlan& plan, int64_t l2_bytes,
                     CUstream stream, const m::TimingOptions& timing) {
  m::KernelTimer timer(timing, plan, l2_bytes, stream);
  return timer.time([&](std::size_t set) { enqueue(static_cast<int>(set)); }).stats.median;
}

/// --compile-only: compiles every config of the sweep (one program a config, in parallel) and prints
/// each GEMM kernel's registers, spills and shared memory.
int compile_sweep(const std::vector<Shape>& shapes, ktune::DType dtype, const std::string& layout,
                  const std::string& arch) {
  const kt::SourceLibrary library = kt::SourceLibrary::builtin();
  h::NvrtcCompiler compiler;
  std::map<std::string, std::pair<std::string, std::shared_future<h::CompileResult>>> pending;
  for (const auto& s : shapes) {
    const kt::Problem p{{{"m", s.m}, {"n", s.n}, {"k", s.k}}, dtype, layout};
    for (const ktune::Config& c : ktune::bench::mma_sweep(s.m)) {
      const kt::KernelSpec& spec = kt::find_spec("gemm", c.variant);
      if (auto why = spec.rejection(p, c)) {
        std::printf("%s @ %s rejected: %s\n", spec.canonical_name(p, c).c_str(), s.label.c_str(),
                    why->c_str());
        continue;
      }
      const kt::CompileSpec cs = spec.compile_spec(p, c);
      if (pending.count(cs.name_expressions.front())) continue;
      auto request = kt::make_compile_request(cs, library, arch);
      pending[cs.name_expressions.front()] = {
          spec.canonical_name(p, c),
          std::async(std::launch::async, [&compiler, request] { return compiler.compile(request); }).share()};
    }
  }
  int failures = 0;
  for (auto& [expr, entry] : pending) {
    try {
      const h::CompileResult& r = entry.second.get();
      const auto& res = r.resources.at(r.lowered_names.at(expr));
      std::printf("%-56s regs %3d spill %4d/%4d  %.0f ms\n", entry.first.c_str(), res.registers,
                  res.spill_store_bytes, res.spill_load_bytes, r.compile_ms);
    } catch (const ktune::Error& e) {
      ++failures;
      std::printf("%-56s FAILED: %s\n", entry.first.c_str(), e.what());
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ktune_gemm_bench: the gemm family (mma, wgmma, gemv) vs cuBLASLt on model linear layers"};
  std::vector<std::string> models = {"llama3-8b", "qwen2.5-7b"};
  std::vector<std::string> layers = {"q_proj",    "k_proj",       "qkv_proj",
                                     "gate_proj", "gate_up_proj", "down_proj"};
  std::vector<int64_t> ms = {1, 16, 128, 512, 2048, 4096};
  std::string dtype_text = "bf16";
  std::string layout = "nt";
  std::string shapes_dir = "configs/shapes";
  std::string csv_path;
  int samples = 20;
  bool verbose = false;
  bool compile_only = false;
  std::string compile_arch = "sm_90";
  app.add_option("--models", models, "shape sets in --shapes-dir")->delimiter(',');
  app.add_option("--layers", layers, "layers of the sets (empty: all)")->delimiter(',');
  app.add_option("--m", ms, "token counts")->delimiter(',');
  app.add_option("--dtype", dtype_text, "bf16 or f16");
  app.add_option("--layout", layout, "nt or nn");
  app.add_option("--shapes-dir", shapes_dir, "folder of the shape sets");
  app.add_option("--samples", samples, "timed samples a config (>= 20)")->check(CLI::Range(20, 10000));
  app.add_option("--csv", csv_path, "write every measurement here");
  app.add_flag("--verbose", verbose, "print every config's time");
  app.add_flag("--compile-only", compile_only, "compile the sweep for --arch and print resources; no GPU");
  app.add_option("--arch", compile_arch, "target of --compile-only");
  CLI11_PARSE(app, argc, argv);

  try {
    const std::optional<ktune::DType> dtype = ktune::dtype_from_string(dtype_text);
    const std::vector<Shape> shapes = load_shapes(shapes_dir, models, layers, ms);
    if (compile_only) return compile_sweep(shapes, *dtype, layout, compile_arch);
    h::PrimaryContext ctx(0);
    const h::DeviceInfo info = h::query_device(0);
    const std::string arch = info.arch();
    std::fprintf(stderr, "%s (%s), %zu shapes\n", info.name.c_str(), arch.c_str(), shapes.size());
    CUstream stream = nullptr;
    KTUNE_CU_CHECK(h::driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    m::TimingOptions timing;  // the protocol's defaults: rotated inputs, graph batches below 1 ms
    timing.min_samples = samples;
    m::UtilityKernels util(arch);
    h::CublasLtGemm blas;
    std::fprintf(stderr, "%s\n", blas.version().c_str());
    const kt::KernelSpec& family = kt::find_spec("gemm", "mma");  // work counts: the same for every variant
    const kt::SourceLibrary library = kt::SourceLibrary::builtin();

    // Compile every config any shape will use, in parallel, before timing anything.
    std::map<std::string, std::shared_future<h::CompileResult>> pending;
    h::NvrtcCompiler compiler;
    for (const auto& s : shapes) {
      const kt::Problem p{{{"m", s.m}, {"n", s.n}, {"k", s.k}}, *dtype, layout};
      for (const ktune::Config& c : ktune::bench::mma_sweep(s.m)) {
        const kt::KernelSpec& spec = kt::find_spec("gemm", c.variant);
        if (spec.rejection(p, c)) continue;
        const kt::CompileSpec cs = spec.compile_spec(p, c);
        const std::string key = spec_key(cs);
        if (pending.count(key)) continue;
        auto request = kt::make_compile_request(cs, library, arch);
        pending[key] = std::async(std::launch::async, [&compiler, request] {
                         return compiler.compile(request);
                       }).share();
      }
    }
    std::fprintf(stderr, "compiling %zu kernels...\n", pending.size());
    std::map<std::string, Compiled> compiled;
    for (auto& [key, future] : pending) {
      Compiled c;
      try {
        const h::CompileResult& r = future.get();
        c.module = h::Module::load(r.cubin);
        for (const auto& [expr, lowered] : r.lowered_names) {
          c.functions[expr] = c.module.function(lowered);
          if (r.resources.count(lowered)) c.resources[expr] = r.resources.at(lowered);
        }
      } catch (const ktune::Error& e) {
        c.error = e.what();
      }
      compiled.emplace(key, std::move(c));
    }

    std::FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
    if (csv) std::fprintf(csv, "shape,m,n,k,impl,config,us,tflops,gbs,regs,spill,ok\n");
    std::printf("%-32s %6s %6s %6s | %9s %7s %7s | %9s %7s %7s | %-50s %5s\n", "shape", "m", "n", "k",
                "cublas_us", "TFLOP/s", "GB/s", "mma_us", "TFLOP/s", "GB/s", "best mma config", "ratio");
    double log_small = 0, log_large = 0;
    int n_small = 0, n_large = 0;
    for (const auto& s : shapes) {
      const kt::Problem p{{{"m", s.m}, {"n", s.n}, {"k", s.k}}, *dtype, layout};
      const kt::WorkCounts work = family.work(p);
      const std::size_t esize = ktune::size_of(*dtype);
      const int64_t set_bytes = (s.m * s.k + s.k * s.n) * static_cast<int64_t>(esize);
      const m::FlushPlan flush_plan =
          m::plan_flush(timing, info.l2_bytes, static_cast<uint64_t>(set_bytes), m::free_device_bytes());
      const int sets = flush_plan.sets;
      std::vector<h::DeviceBuffer> a, b;
      for (int i = 0; i < sets; ++i) {
        a.emplace_back(static_cast<std::size_t>(s.m * s.k) * esize);
        b.emplace_back(static_cast<std::size_t>(s.k * s.n) * esize);
        m::random_fill(util, a.back().get(), *dtype, static_cast<uint64_t>(s.m * s.k), 1 + 2 * i, 1.0f,
                       stream);
        m::random_fill(util, b.back().get(), *dtype, static_cast<uint64_t>(s.k * s.n), 2 + 2 * i, 1.0f,
                       stream);
      }
      h::DeviceBuffer c_blas(static_cast<std::size_t>(s.m * s.n) * esize);
      h::DeviceBuffer c(static_cast<std::size_t>(s.m * s.n) * esize);
      const h::CublasGemmProblem bp{*dtype, layout == "nt", s.m, s.n, s.k};
      blas.run(bp, a[0].get(), b[0].get(), c_blas.get(), stream);
      KTUNE_CU_CHECK(h::driver().cuStreamSynchronize(stream));
      const double blas_us = time_launches(
          [&](int i) {
            blas.run(bp, a[static_cast<std::size_t>(i)].get(), b[static_cast<std::size_t>(i)].get(),
                     c_blas.get(), stream);
          },
          flush_plan, info.l2_bytes, stream, timing);
      blas.run(bp, a[0].get(), b[0].get(), c_blas.get(), stream);
      const auto row = [&](const std::string& impl, const std::string& config, double us, int regs, int spill,
                           bool ok) {
        if (csv) {
          std::fprintf(csv, "%s,%lld,%lld,%lld,%s,%s,%.3f,%.2f,%.1f,%d,%d,%d\n", s.label.c_str(),
                       (long long)s.m, (long long)s.n, (long long)s.k, impl.c_str(), config.c_str(), us,
                       work.flops / us * 1e-6, work.min_bytes / us * 1e-3, regs, spill, ok ? 1 : 0);
        }
      };
      row("cublas", blas.algorithm(bp), blas_us, 0, 0, true);

      double best_us = 1e30;
      std::string best_name = "(none valid)";
      for (const ktune::Config& cfg : ktune::bench::mma_sweep(s.m)) try {
          const kt::KernelSpec& spec = kt::find_spec("gemm", cfg.variant);
          if (spec.rejection(p, cfg)) continue;
          const std::string name = spec.canonical_name(p, cfg);
          const kt::CompileSpec cs = spec.compile_spec(p, cfg);
          const Compiled& comp = compiled.at(spec_key(cs));
          if (!comp.error.empty()) {
            std::fprintf(stderr, "%s: %s\n", name.c_str(), comp.error.c_str());
            continue;
          }
          const kt::LaunchPlan plan = spec.launch_plan(p, cfg);
          std::map<std::string, h::DeviceBuffer> scratch;
          for (const auto& t : plan.tensors) {
            if (t.role == kt::TensorRole::kWorkspace)
              scratch.emplace(t.name, h::DeviceBuffer(static_cast<std::size_t>(t.bytes())));
          }
          // Packed arguments of every launch for every input set.
          std::vector<std::vector<std::unique_ptr<kt::PackedArgs>>> args(static_cast<std::size_t>(sets));
          for (int i = 0; i < sets; ++i) {
            std::vector<uint64_t> ptrs;
            for (const auto& t : plan.tensors) {
              if (t.name == "a")
                ptrs.push_back(a[static_cast<std::size_t>(i)].get());
              else if (t.name == "b")
                ptrs.push_back(b[static_cast<std::size_t>(i)].get());
              else if (t.name == "c")
                ptrs.push_back(c.get());
              else
                ptrs.push_back(scratch.at(t.name).get());
            }
            for (const auto& l : plan.launches)
              args[static_cast<std::size_t>(i)].push_back(std::make_unique<kt::PackedArgs>(plan, l, ptrs));
          }
          for (const auto& l : plan.launches) {
            h::prepare_function(comp.functions.at(l.name_expression), l.dims.dynamic_smem_bytes);
          }
          const auto enqueue = [&](int i) {
            for (std::size_t j = 0; j < plan.launches.size(); ++j) {
              const auto& l = plan.launches[j];
              h::launch(comp.functions.at(l.name_expression), {l.dims.grid.x, l.dims.grid.y, l.dims.grid.z},
                        {l.dims.block.x, l.dims.block.y, l.dims.block.z}, l.dims.dynamic_smem_bytes, stream,
                        args[static_cast<std::size_t>(i)][j]->data());
            }
          };
          enqueue(0);
          const m::ErrorMetrics err =
              m::gpu_compare(util, c.get(), c_blas.get(), *dtype, static_cast<uint64_t>(s.m * s.n), stream);
          const bool ok = m::judge(err, m::tolerance_for(*dtype)).ok;
          const double us = time_launches(enqueue, flush_plan, info.l2_bytes, stream, timing);
          // Resources of the main (GEMM) launch: the second one after the atomic split-K's zeroing; absent
          // when ptxas reported none for it.
          const bool zeroing_first = plan.launches.size() > 1 && cfg.find("SPLIT_K_MODE") == 1;
          const std::string& main_expr = plan.launches[zeroing_first ? 1 : 0].name_expression;
          const auto found = comp.resources.find(main_expr);
          const h::KernelResources res = found != comp.resources.end() ? found->second : h::KernelResources{};
          row(cfg.variant, name, us, res.registers, res.spill_store_bytes, ok);
          if (verbose) {
            std::printf("    %-56s %9.2f us %7.1f TFLOP/s %7.0f GB/s regs %3d spill %d%s\n", name.c_str(), us,
                        work.flops / us * 1e-6, work.min_bytes / us * 1e-3, res.registers,
                        res.spill_store_bytes, ok ? "" : "  WRONG");
          }
          if (ok && us < best_us) {
            best_us = us;
            best_name = name;
          }
        } catch (const std::exception& e) {  // one broken config must not end the whole comparison
          std::fprintf(stderr, "config skipped: %s\n", e.what());
        }
      const double ratio = blas_us / best_us;
      std::printf("%-32s %6lld %6lld %6lld | %9.2f %7.1f %7.0f | %9.2f %7.1f %7.0f | %-50s %5.2f\n",
                  s.label.c_str(), (long long)s.m, (long long)s.n, (long long)s.k, blas_us,
                  work.flops / blas_us * 1e-6, work.min_bytes / blas_us * 1e-3, best_us,
                  work.flops / best_us * 1e-6, work.min_bytes / best_us * 1e-3, best_name.c_str(), ratio);
      std::fflush(stdout);
      if (s.m <= 16) {
        log_small += std::log(ratio);
        ++n_small;
      }
      if (s.m >= 512) {
        log_large += std::log(ratio);
        ++n_large;
      }
    }
    if (csv) std::fclose(csv);
    if (n_small)
      std::printf("geomean speed-up over cuBLAS, M <= 16:  %.3f (%d shapes; target >= 1.1)\n",
                  std::exp(log_small / n_small), n_small);
    if (n_large)
      std::printf("geomean speed-up over cuBLAS, M >= 512: %.3f (%d shapes; target >= 0.7)\n",
                  std::exp(log_large / n_large), n_large);
    KTUNE_CU_CHECK(h::driver().cuStreamDestroy(stream));
    return 0;
  } catch (const ktune::Error& e) {
    std::fprintf(stderr, "ktune_gemm_bench: %s\n%s\n", e.what(), e.detail().c_str());
    return ktune::exit_code(e.kind());
  }
}
