#include "tuner/library/cublas_baseline_measurer.hpp"

#include <atomic>

#include <fmt/format.h>

#include "harness/device_info.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "ktune/error.hpp"
#include "tuner/library/library_candidates.hpp"

namespace ktune::tuner {

namespace kt = kernel_templates;

CublasBaselineMeasurer::CublasBaselineMeasurer(int device, CandidateMeasurer* measurer)
    : device_(device), measurer_(measurer), algorithms_(device) {}

CublasBaselineMeasurer::~CublasBaselineMeasurer() = default;

const harness::CompileResult& CublasBaselineMeasurer::reference(const kt::Problem& problem) {
  const kt::CompileSpec cs = library_reference_spec("gemm", problem).reference(problem).compile;
  std::string id = cs.source_name;
  for (const auto& e : cs.name_expressions) id += "|" + e;
  if (const auto it = references_.find(id); it != references_.end()) return it->second;
  static const kt::SourceLibrary sources = kt::SourceLibrary::builtin();
  const std::string arch = harness::query_device(device_).arch();
  return references_.emplace(id, compiler_.compile(kt::make_compile_request(cs, sources, arch)))
      .first->second;
}

measure::CandidateResult CublasBaselineMeasurer::measure_cublas(const kt::Problem& given,
                                                                const measure::TimingOptions& t,
                                                                bool verify) {
  measure::CandidateResult res;
  res.name = cublas_baseline_name(given);
  res.flush = std::string(measure::to_string(t.flush));
  if (auto why = no_cublas_baseline("gemm", given)) {
    res.outcome = Outcome::kSkipped;
    res.reason = *why;
    return res;
  }
  t.validate();
  kt::Problem problem = given;
  if (problem.layout.empty()) problem.layout = "nt";
  // kNoDevice (no driver, no GPU, no libcublasLt) escapes from here.
  const std::vector<Config> best = algorithms_.configs("gemm", problem, 1);
  if (best.empty()) {
    res.outcome = Outcome::kLaunchError;
    res.reason = fmt::format("cuBLASLt offers no algorithm for gemm {} {} {}", problem.shape_text(),
                             to_string(problem.dtype), problem.layout);
    return res;
  }
  measure::CandidateRequest request =
      library_candidate_request("gemm", problem, best.front(), reference(problem));
  request.name = res.name;
  request.device = device_;
  request.timing = t;
  request.timing.counters = false;
  request.timing.activity_timer = false;
  if (!verify) {
    request.reference.reset();
    request.checks.clear();
  }
  static std::atomic<uint64_t> next_id{uint64_t{1} << 48};  // apart from the tuning loop's ids
  request.id = next_id++;
  if (measurer_ == nullptr) {
    own_ = std::make_unique<RunnerMeasurer>(device_);
    measurer_ = own_.get();
  }
  measure::CandidateResult out = measurer_->measure(request);
  out.name = res.name;
  out.counters = {{"available", false}, {"reason", "not measured for the cuBLAS baseline"}};
  return out;
}

}  // namespace ktune::tuner
