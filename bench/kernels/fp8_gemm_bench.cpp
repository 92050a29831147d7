// ktune_fp8_bench: the fp8_gemm template against cuBLASLt fp8 on the linear layers of Llama-3-8B
// (configs/shapes/fp8_llama3-8b.toml), following ktune_gemm_bench's protocol: for every shape a small
// built-in sweep of configs by shape class (fp8_bench_sweep.hpp) and cuBLASLt, each timed by ktune's
// one timing path (measure/kernel_timer.hpp: warm-up, inputs rotated over copies larger than twice
// the L2, CUDA-graph batches below 1 ms, the stopping rule with at least --samples samples). Every config's
// output is checked against the fp8 GPU reference (f32 accumulation of the dequantised inputs). Prints per
// shape TFLOP/s and GB/s of both, the best config and the ratio, then the geomean ratio by M.
//
//   ktune_fp8_bench [--m 1,16,128,1024,4096] [--layers qkv_proj,...] [--layout nt|nt+rowcol]
//                   [--fast-accum] [--samples 20] [--csv FILE] [--verbose]
//   ktune_fp8_bench --compile-only [--arch sm_90]   (no GPU: registers and spills of the sweep)

#include <fmt/format.h>
#include <toml++/toml.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <future>
#include <map>
#include <memory>

#include "fp8_bench_sweep.hpp"
#include "harness/context.hpp"
#include "harness/cublaslt_fp8_gemm.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/fp8_gemm/fp8_gemm_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/gpu_compare.hpp"
#include "measure/kernel_timer.hpp"
#include "measure/random_fill.hpp"
#include "measure/tolerance.hpp"

namespace kt = ktune::kernel_templates;
namespace h = ktune::harness;
namespace m = ktune::measure;

namespace {

struct Shape {
  std::string label;  // "qkv_proj.m16"
  int64_t m, n, k;
};

std::vector<Shape> load_shapes(const std::string& path, const std::vector<std::string>& layers,
                               const std::vector<int64_t>& ms) {
  toml::table t;
  try {
    t = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw ktune::Error(ktune::ErrorKind::kBadInput, fmt::format("{}: {}", path, e.description()));
  }
  const auto* entries = t["layer"].as_array();
  if (!entries) throw ktune::Error(ktune::ErrorKind::kBadInput, path + ": no [[layer]]");
  std::vector<Shape> out;
  for (const auto& e : *entries) {
    const auto& l = *e.as_table();
    const std::string name = l["name"].value_or(std::string{});
    if (!layers.empty() && std::find(layers.begin(), layers.end(), name) == layers.end()) continue;
    for (int64_t m : ms) {
      out.push_back(
          {fmt::format("{}.m{}", name, m), m, l["n"].value_or(int64_t{0}), l["k"].value_or(int64_t{0})});
    }
  }
  return out;
}

kt::Problem problem_of(const Shape& s, const std::string& layout) {
  return {{{"m", s.m}, {"n", s.n}, {"k", s.k}}, ktune::DType::kFP8E4M3, layout};
}

/// Median microseconds of one call of `enqueue(set)`.
/// One timing by ktune's one timing path (measure/kernel_timer.hpp): median microseconds of a launch.
double time_launches(const std::function<void(int set)>& enqueue, const m::FlushPlan& plan, int64_t l2_bytes,
                     CUstream stream, const m::TimingOptions& timing) {
  m::KernelTimer timer(timing, plan, l2_bytes, stream);
  return timer.time([&](std::size_t set) { enqueue(static_cast<int>(set)); }).stats.median;
}

/// Compiles (in parallel) every CompileSpec of the sweep plus the reference; results by spec key.
std::map<std::string, std::shared_future<h::CompileResult>> compile_sweep(const std::vector<Shape>& shapes,
                                                                          const std::string& layout,
                                                                          const std::string& arch,
                                                                          h::NvrtcCompiler& compiler) {
  const kt::KernelSpec& spec = kt::find_spec("fp8_gemm", "mma");  // the reference's
  const kt::SourceLibrary library = kt::SourceLibrary::builtin();
  std::map<std::string, std::shared_future<h::CompileResult>> pending;
  const auto add = [&](const kt::CompileSpec& cs) {
    std::string key = cs.source_name;
    for (const auto& e : cs.name_expressions) key += "|" + e;
    if (pending.count(key)) return;
    auto request = kt::make_compile_request(cs, library, arch);
    pending[key] =
        std::async(std::launch::async, [&compiler, request] { return compiler.compile(request); }).share();
  };
  for (const auto& s : shapes) {
    const kt::Problem p = problem_of(s, layout);
    add(spec.reference(p).compile);
    for (const ktune::Config& c : ktune::bench::fp8_sweep(s.m)) {
      const kt::KernelSpec& variant = kt::find_spec("fp8_gemm", c.variant);
      if (!variant.rejection(p, c) && !variant.arch_rejection(arch)) add(variant.compile_spec(p, c));
    }
  }
  return pending;
}

std::string key_of(const kt::CompileSpec& cs) {
  std::string key = cs.source_name;
  for (const auto& e : cs.name_expressions) key += "|" + e;
  return key;
}

/// --compile-only: every config's GEMM kernel registers, spills and shared memory for `arch`.
int print_resources(const std::vector<Shape>& shapes, const std::string& layout, const std::string& arch) {
  h::NvrtcCompiler compiler;
  auto pending = compile_sweep(shapes, layout, arch, compiler);
  int failures = 0;
  for (auto& [key, future] : pending) {
    try {
      const h::CompileResult& r = future.get();
      for (const auto& [expr, lowered] : r.lowered_names) {
        const auto res = r.resources.find(lowered);
        if (res == r.resources.end()) continue;
        std::printf("%-62s regs %3d spill %4d/%4d smem %6d  %.0f ms\n", expr.c_str(), res->second.registers,
                    res->second.spill_store_bytes, res->second.spill_load_bytes, res->second.shared_bytes,
                    r.compile_ms);
      }
    } catch (const ktune::Error& e) {
      ++failures;
      std::printf("%s FAILED: %s\n%s\n", key.c_str(), e.what(), e.detail().c_str());
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ktune_fp8_bench: the fp8_gemm template vs cuBLASLt fp8 on Llama-3-8B linear layers"};
  std::vector<std::string> layers;
  std::vector<int64_t> ms = {1, 16, 128, 1024, 4096};
  std::string layout = "nt";
  std::string shapes_path = "configs/shapes/fp8_llama3-8b.toml";
  std::string csv_path;
  std::string compile_arch = "sm_90";
  int samples = 20;
  bool verbose = false;
  bool compile_only = false;
  bool fast_accum = false;
  app.add_option("--layers", layers, "layers of the set (empty: all)")->delimiter(',');
  app.add_option("--m", ms, "token counts")->delimiter(',');
  app.add_option("--layout", layout, "nt (per-tensor scales) or nt+rowcol");
  app.add_option("--shapes", shapes_path, "the shape set");
  app.add_option("--samples", samples, "timed samples a config (>= 20)")->check(CLI::Range(20, 10000));
  app.add_option("--csv", csv_path, "write every measurement here");
  app.add_flag("--verbose", verbose, "print every config's time");
  app.add_flag("--fast-accum", fast_accum, "cuBLASLt with CUBLASLT_MATMUL_DESC_FAST_ACCUM");
  app.add_flag("--compile-only", compile_only, "compile the sweep for --arch and print resources; no GPU");
  app.add_option("--arch", compile_arch, "target of --compile-only");
  CLI11_PARSE(app, argc, argv);

  try {
    const std::vector<Shape> shapes = load_shapes(shapes_path, layers, ms);
    if (compile_only) return print_resources(shapes, layout, compile_arch);
    h::PrimaryContext ctx(0);
    const h::DeviceInfo info = h::query_device(0);
    const std::string arch = info.arch();
    if (auto why = kt::Fp8GemmSpec::rejection_for_arch(arch))
      throw ktune::Error(ktune::ErrorKind::kNoDevice, *why);
    std::fprintf(stderr, "%s (%s), %zu shapes\n", info.name.c_str(), arch.c_str(), shapes.size());
    CUstream stream = nullptr;
    KTUNE_CU_CHECK(h::driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    m::TimingOptions timing;  // the protocol's defaults: rotated inputs, graph batches below 1 ms
    timing.min_samples = samples;
    m::UtilityKernels util(arch);
    std::unique_ptr<h::CublasLtFp8Gemm> blas;
    const bool per_tensor = layout == "nt";
    if (per_tensor) {
      blas = std::make_unique<h::CublasLtFp8Gemm>();
      std::fprintf(stderr, "%s%s\n", blas->version().c_str(), fast_accum ? " (fast accumulation)" : "");
    }
    const kt::KernelSpec& spec = kt::find_spec("fp8_gemm", "mma");
    h::NvrtcCompiler compiler;
    auto pending = compile_sweep(shapes, layout, arch, compiler);
    std::fprintf(stderr, "compiling %zu programs...\n", pending.size());
    std::map<std::string, h::Module> modules;
    std::map<std::string, std::string> errors;
    std::map<std::string, h::KernelResources> resources;  // by name expression
    std::map<std::string, std::string> lowered_names;
    for (auto& [key, future] : pending) {
      try {
        const h::CompileResult& r = future.get();
        modules.emplace(key, h::Module::load(r.cubin));
        for (const auto& [expr, lowered] : r.lowered_names) {
          lowered_names[expr] = lowered;
          if (r.resources.count(lowered)) resources[expr] = r.resources.at(lowered);
        }
      } catch (const ktune::Error& e) {
        errors[key] = e.what();
      }
    }
    const auto function = [&](const kt::CompileSpec& cs, const std::string& expr) {
      return modules.at(key_of(cs)).function(lowered_names.at(expr));
    };

    std::FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
    if (csv) std::fprintf(csv, "shape,m,n,k,impl,config,us,tflops,gbs,regs,spill,ok\n");
    std::printf("%-20s %6s %6s %6s | %9s %7s %7s | %9s %7s %7s | %-52s %5s\n", "shape", "m", "n", "k",
                "cublas_us", "TFLOP/s", "GB/s", "fp8_us", "TFLOP/s", "GB/s", "best fp8_gemm config", "ratio");
    std::map<int64_t, std::pair<double, int>> log_ratio;  // by m
    for (const auto& s : shapes) {
      const kt::Problem p = problem_of(s, layout);
      const kt::WorkCounts work = spec.work(p);
      const kt::ReferenceSpec ref = spec.reference(p);
      const int64_t set_bytes = s.m * s.k + s.n * s.k;
      const m::FlushPlan flush_plan =
          m::plan_flush(timing, info.l2_bytes, static_cast<uint64_t>(set_bytes), m::free_device_bytes());
      const int sets = flush_plan.sets;
      std::map<std::string, std::vector<h::DeviceBuffer>> inputs;  // by tensor name, one per set
      for (const auto& t : ref.plan.tensors) {
        if (t.role != kt::TensorRole::kInput) continue;
        for (int i = 0; i < sets; ++i) {
          inputs[t.name].emplace_back(static_cast<std::size_t>(t.bytes()));
          m::random_fill(util, inputs[t.name].back().get(), t.dtype, static_cast<uint64_t>(t.elements),
                         static_cast<uint64_t>(7 * i) + inputs.size(), 1.0f, stream);
        }
      }
      h::DeviceBuffer c_ref(static_cast<std::size_t>(s.m * s.n) * 4);
      h::DeviceBuffer c(static_cast<std::size_t>(s.m * s.n) * 2);
      const auto pointers = [&](const kt::LaunchPlan& plan, int set,
                                std::map<std::string, h::DeviceBuffer>& scratch) {
        std::vector<uint64_t> ptrs;
        for (const auto& t : plan.tensors) {
          if (inputs.count(t.name)) {
            ptrs.push_back(inputs.at(t.name)[static_cast<std::size_t>(set)].get());
          } else if (t.name == "c") {
            ptrs.push_back(c.get());
          } else if (t.name == "c_ref") {
            ptrs.push_back(c_ref.get());
          } else {
            if (!scratch.count(t.name))
              scratch.emplace(t.name, h::DeviceBuffer(static_cast<std::size_t>(t.bytes())));
            ptrs.push_back(scratch.at(t.name).get());
          }
        }
        return ptrs;
      };
      {  // the reference on set 0
        std::map<std::string, h::DeviceBuffer> none;
        const auto& l = ref.plan.launches.front();
        kt::PackedArgs args(ref.plan, l, pointers(ref.plan, 0, none));
        h::launch(function(ref.compile, l.name_expression), {l.dims.grid.x, l.dims.grid.y, 1},
                  {l.dims.block.x, l.dims.block.y, 1}, 0, stream, args.data());
      }
      const auto row = [&](const std::string& impl, const std::string& config, double us, int regs, int spill,
                           bool ok) {
        if (csv) {
          std::fprintf(csv, "%s,%lld,%lld,%lld,%s,%s,%.3f,%.2f,%.1f,%d,%d,%d\n", s.label.c_str(),
                       (long long)s.m, (long long)s.n, (long long)s.k, impl.c_str(), config.c_str(), us,
                       work.flops / us * 1e-6, work.min_bytes / us * 1e-3, regs, spill, ok ? 1 : 0);
        }
      };
      double blas_us = 0;
      if (blas) {
        const h::CublasFp8Problem bp{s.m, s.n, s.k, fast_accum};
        const auto run = [&](int i) {
          const auto at = [&](const char* name) {
            return inputs.at(name)[static_cast<std::size_t>(i)].get();
          };
          blas->run(bp, at("a"), at("b"), at("a_scale"), at("b_scale"), c.get(), stream);
        };
        run(0);
        const m::ErrorMetrics err =
            m::gpu_compare(util, c.get(), ktune::DType::kBF16, c_ref.get(), ktune::DType::kF32,
                           static_cast<uint64_t>(s.m * s.n), stream);
        const bool ok = m::judge(err, m::tolerance_for(ktune::DType::kBF16)).ok;
        blas_us = time_launches(run, flush_plan, info.l2_bytes, stream, timing);
        row("cublaslt", blas->algorithm(bp), blas_us, 0, 0, ok);
        if (!ok) std::fprintf(stderr, "%s: cuBLASLt output differs from the reference\n", s.label.c_str());
      }

      double best_us = 1e30;
      std::string best_name = "(none valid)";
      for (const ktune::Config& cfg : ktune::bench::fp8_sweep(s.m)) try {
          const kt::KernelSpec& variant = kt::find_spec("fp8_gemm", cfg.variant);
          if (variant.rejection(p, cfg) || variant.arch_rejection(arch)) continue;
          const std::string name = variant.canonical_name(p, cfg);
          const kt::CompileSpec cs = variant.compile_spec(p, cfg);
          if (errors.count(key_of(cs))) {
            std::fprintf(stderr, "%s: %s\n", name.c_str(), errors.at(key_of(cs)).c_str());
            continue;
          }
          const kt::LaunchPlan plan = variant.launch_plan(p, cfg);
          std::map<std::string, h::DeviceBuffer> scratch;
          std::vector<std::vector<std::unique_ptr<kt::PackedArgs>>> args(static_cast<std::size_t>(sets));
          for (int i = 0; i < sets; ++i) {
            const auto ptrs = pointers(plan, i, scratch);
            for (const auto& l : plan.launches) {
              args[static_cast<std::size_t>(i)].push_back(std::make_unique<kt::PackedArgs>(plan, l, ptrs));
            }
          }
          for (const auto& l : plan.launches) {
            h::prepare_function(function(cs, l.name_expression), l.dims.dynamic_smem_bytes);
          }
          const auto enqueue = [&](int i) {
            for (std::size_t j = 0; j < plan.launches.size(); ++j) {
              const auto& l = plan.launches[j];
              h::launch(function(cs, l.name_expression), {l.dims.grid.x, l.dims.grid.y, l.dims.grid.z},
                        {l.dims.block.x, l.dims.block.y, l.dims.block.z}, l.dims.dynamic_smem_bytes, stream,
                        args[static_cast<std::size_t>(i)][j]->data());
            }
          };
          enqueue(0);
          const m::ErrorMetrics err =
              m::gpu_compare(util, c.get(), ktune::DType::kBF16, c_ref.get(), ktune::DType::kF32,
                             static_cast<uint64_t>(s.m * s.n), stream);
          const bool ok = m::judge(err, m::tolerance_for(ktune::DType::kBF16)).ok;
          const double us = time_launches(enqueue, flush_plan, info.l2_bytes, stream, timing);
          const auto found = resources.find(plan.launches.front().name_expression);
          const h::KernelResources res = found != resources.end() ? found->second : h::KernelResources{};
          row("fp8_gemm", name, us, res.registers, res.spill_store_bytes, ok);
          if (verbose) {
            std::printf("    %-58s %9.2f us %7.1f TFLOP/s %7.0f GB/s regs %3d spill %d%s\n", name.c_str(), us,
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
      const double ratio = blas_us > 0 ? blas_us / best_us : 0;
      std::printf("%-20s %6lld %6lld %6lld | %9.2f %7.1f %7.0f | %9.2f %7.1f %7.0f | %-52s %5.2f\n",
                  s.label.c_str(), (long long)s.m, (long long)s.n, (long long)s.k, blas_us,
                  blas_us > 0 ? work.flops / blas_us * 1e-6 : 0,
                  blas_us > 0 ? work.min_bytes / blas_us * 1e-3 : 0, best_us, work.flops / best_us * 1e-6,
                  work.min_bytes / best_us * 1e-3, best_name.c_str(), ratio);
      std::fflush(stdout);
      if (ratio > 0 && best_us < 1e30) {
        log_ratio[s.m].first += std::log(ratio);
        ++log_ratio[s.m].second;
      }
    }
    if (csv) std::fclose(csv);
    for (const auto& [m, acc] : log_ratio) {
      std::printf("geomean speed-up of fp8_gemm over cuBLASLt fp8, M = %lld: %.3f (%d shapes)\n",
                  (long long)m, std::exp(acc.first / acc.second), acc.second);
    }
    KTUNE_CU_CHECK(h::driver().cuStreamDestroy(stream));
    return 0;
  } catch (const ktune::Error& e) {
    std::fprintf(stderr, "ktune_fp8_bench: %s\n%s\n", e.what(), e.detail().c_str());
    return ktune::exit_code(e.kind());
  }
}
