#include "tuner/cublas_baseline_measurer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "harness/context.hpp"
#include "harness/cublaslt_gemm.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/gpu_compare.hpp"
#include "measure/kernel_timer.hpp"
#include "measure/nvml.hpp"
#include "measure/poison.hpp"
#include "measure/random_fill.hpp"
#include "measure/tolerance.hpp"
#include "measure/utility_kernels.hpp"

namespace ktune::tuner {
namespace {

namespace h = harness;
namespace kt = kernel_templates;

/// One copy of the GEMM's operands and output.
struct OperandSet {
  h::DeviceBuffer a;
  h::DeviceBuffer b;
  h::DeviceBuffer c;
};

}  // namespace

struct CublasBaselineMeasurer::State {
  h::DeviceInfo device;
  h::PrimaryContext context;
  CUstream stream = nullptr;
  h::UtilityKernels utility;
  h::CublasLtGemm blas;
  h::NvrtcCompiler compiler;
  kt::SourceLibrary sources = kt::SourceLibrary::builtin();
  std::map<std::string, std::pair<h::Module, std::map<std::string, std::string>>> references;

  explicit State(int ordinal)
      : device(h::query_device(ordinal)), context(ordinal), stream(make_stream()), utility(device.arch()) {}
  ~State() {
    if (stream != nullptr) h::driver().cuStreamDestroy(stream);
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  static CUstream make_stream() {
    CUstream s = nullptr;
    KTUNE_CU_CHECK(h::driver().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    return s;
  }

  /// The reference's module (compiled once per source and name expressions) and its lowered names.
  const std::pair<h::Module, std::map<std::string, std::string>>& reference_module(
      const kt::CompileSpec& cs) {
    std::string id = cs.source_name;
    for (const auto& e : cs.name_expressions) id += "|" + e;
    auto it = references.find(id);
    if (it == references.end()) {
      const h::CompileResult r = compiler.compile(kt::make_compile_request(cs, sources, device.arch()));
      it = references.emplace(id, std::make_pair(h::Module::load(r.cubin), r.lowered_names)).first;
    }
    return it->second;
  }
};

CublasBaselineMeasurer::CublasBaselineMeasurer(int device) : device_(device) {}
CublasBaselineMeasurer::~CublasBaselineMeasurer() = default;

CublasBaselineMeasurer::State& CublasBaselineMeasurer::state() {
  if (!state_) state_ = std::make_unique<State>(device_);
  state_->context.make_current();
  return *state_;
}

h::CandidateResult CublasBaselineMeasurer::measure_cublas(const kt::Problem& problem,
                                                          const h::TimingOptions& t, bool verify) {
  h::CandidateResult res;
  res.name = cublas_baseline_name(problem);
  res.flush = std::string(h::to_string(t.flush));
  if (auto why = no_cublas_baseline("gemm", problem)) {
    res.outcome = ktune::Outcome::kSkipped;
    res.reason = *why;
    return res;
  }
  t.validate();
  State& s = state();  // kNoDevice (no driver, no GPU, no libcublasLt) escapes from here
  std::string phase = "inputs";
  try {
    const int64_t m = problem.dim("m"), n = problem.dim("n"), k = problem.dim("k");
    const ktune::DType dtype = problem.dtype;
    const h::CublasGemmProblem bp{dtype, problem.layout != "nn", m, n, k};
    const uint64_t a_count = static_cast<uint64_t>(m * k), b_count = static_cast<uint64_t>(k * n),
                   c_count = static_cast<uint64_t>(m * n);
    const std::size_t esize = ktune::size_of(dtype);
    std::vector<OperandSet> sets;
    sets.push_back({h::DeviceBuffer(a_count * esize), h::DeviceBuffer(b_count * esize),
                    h::DeviceBuffer(c_count * esize)});
    // The worker's seeds for buffers 0 ("a") and 1 ("b"): the candidate and cuBLAS see the same inputs.
    h::random_fill(s.utility, sets[0].a.get(), dtype, a_count, t.seed, 1.0f, s.stream);
    h::random_fill(s.utility, sets[0].b.get(), dtype, b_count, t.seed + (uint64_t{1} << 32), 1.0f, s.stream);
    h::poison(sets[0].c.get(), sets[0].c.size(), s.stream);

    std::optional<h::DeviceBuffer> c_ref;
    if (verify) {
      phase = "reference";
      const kt::ReferenceSpec ref = kt::specs_of("gemm").at(0)->reference(problem);
      const auto& [module, lowered] = s.reference_module(ref.compile);
      std::map<std::string, h::DeviceBuffer> own;
      std::vector<uint64_t> ptrs;
      for (const kt::TensorSpec& tensor : ref.plan.tensors) {
        if (tensor.name == "a") {
          ptrs.push_back(sets[0].a.get());
        } else if (tensor.name == "b") {
          ptrs.push_back(sets[0].b.get());
        } else {
          auto& buffer = own.emplace(tensor.name, h::DeviceBuffer(static_cast<std::size_t>(tensor.bytes())))
                             .first->second;
          h::poison(buffer.get(), buffer.size(), s.stream);
          ptrs.push_back(buffer.get());
        }
      }
      for (const kt::KernelLaunch& launch : ref.plan.launches) {
        const CUfunction f = module.function(lowered.at(launch.name_expression));
        h::allow_dynamic_smem(f, launch.dims.dynamic_smem_bytes);
        kt::PackedArgs args(ref.plan, launch, ptrs);
        h::launch(f, {launch.dims.grid.x, launch.dims.grid.y, launch.dims.grid.z},
                  {launch.dims.block.x, launch.dims.block.y, launch.dims.block.z},
                  launch.dims.dynamic_smem_bytes, s.stream, args.data());
      }
      KTUNE_CU_CHECK(h::driver().cuStreamSynchronize(s.stream));
      if (ref.compare.size() != 1 || !own.contains(ref.compare.front().second)) {
        throw Error(ErrorKind::kRuntime, "the gemm reference does not name one output to compare with");
      }
      c_ref = std::move(own.at(ref.compare.front().second));
    }

    phase = "first run";
    s.blas.run(bp, sets[0].a.get(), sets[0].b.get(), sets[0].c.get(), s.stream);  // builds the plan
    KTUNE_CU_CHECK(h::driver().cuStreamSynchronize(s.stream));
    res.resources = {{"library", s.blas.version()}, {"algorithm", s.blas.algorithm(bp)}};

    if (c_ref) {
      phase = "verify";
      const h::ErrorMetrics err = h::gpu_compare(s.utility, sets[0].c.get(), dtype, c_ref->get(),
                                                 ktune::DType::kF32, c_count, s.stream);
      const h::Verdict v = h::judge(err, h::tolerance_for(dtype));
      res.rel_err = err.rel_err;
      res.max_abs_err = err.max_abs_err;
      if (!v.ok) {
        res.outcome = ktune::Outcome::kIncorrect;
        res.reason = fmt::format("cuBLASLt output vs the gemm reference: {}", v.reason);
        return res;
      }
      c_ref.reset();
    }

    phase = "flush set-up";
    // The one timing path, exactly as the worker times templates (measure/kernel_timer.hpp).
    const uint64_t set_bytes = static_cast<uint64_t>((a_count + b_count + c_count) * esize);
    h::FlushPlan plan = h::plan_flush(t, s.device.l2_bytes, set_bytes, h::free_device_bytes());
    for (int i = 1; i < plan.sets; ++i) {
      OperandSet copy{h::DeviceBuffer(sets[0].a.size()), h::DeviceBuffer(sets[0].b.size()),
                      h::DeviceBuffer(sets[0].c.size())};
      KTUNE_CU_CHECK(h::driver().cuMemcpyDtoDAsync(copy.a.get(), sets[0].a.get(), copy.a.size(), s.stream));
      KTUNE_CU_CHECK(h::driver().cuMemcpyDtoDAsync(copy.b.get(), sets[0].b.get(), copy.b.size(), s.stream));
      sets.push_back(std::move(copy));
    }
    KTUNE_CU_CHECK(h::driver().cuStreamSynchronize(s.stream));
    res.flush = plan.describe();
    h::KernelTimer timer(t, std::move(plan), s.device.l2_bytes, s.stream, &s.utility);

    phase = "timing";
    const h::TimingResult r = timer.time([&](std::size_t i) {
      const OperandSet& o = sets[i];
      s.blas.run(bp, o.a.get(), o.b.get(), o.c.get(), s.stream);
    });
    res.launches_per_sample = r.launches_per_sample;
    res.resources["flush"] = res.flush;
    res.resources["launches_per_sample"] = r.launches_per_sample;
    res.samples_us = r.samples_us;
    res.stats = r.stats;
    res.stop_reason = std::string(h::to_string(r.stop));
    res.drift = r.drift;
    const h::NvmlReading nvml = h::nvml_read(s.device.pci_bus_id);
    res.sm_clock_mhz = nvml.sm_clock_mhz;
    res.temperature_c = nvml.temperature_c;
    if (!nvml.unknown_reason.empty()) res.resources["nvml_unknown_reason"] = nvml.unknown_reason;
    const kt::WorkCounts work = kt::specs_of("gemm").at(0)->work(problem);
    res.gbps = work.min_bytes / (res.stats->median * 1e-6) / 1e9;
    res.tflops = work.flops / (res.stats->median * 1e-6) / 1e12;
    res.counters = {{"available", false}, {"reason", "not measured for the cuBLAS baseline"}};
    res.outcome = ktune::Outcome::kOk;
    return res;
  } catch (const Error& e) {
    res.stats.reset();
    res.samples_us.clear();
    res.outcome = e.api_code() == "CUDA_ERROR_OUT_OF_MEMORY" ? ktune::Outcome::kExceedsLimits
                                                             : ktune::Outcome::kLaunchError;
    res.reason = fmt::format("{}: {}", phase, e.what());
    return res;
  }
}

}  // namespace ktune::tuner
