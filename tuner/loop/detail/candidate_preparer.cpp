#include "tuner/loop/detail/candidate_preparer.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "harness/cublaslt_algorithm.hpp"
#include "kernel_templates/candidate_builder.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "tuner/library/library_candidates.hpp"
#include "tuner/space/spec_work.hpp"

namespace ktune::tuner::detail {
namespace {

/// A compile log's first lines are the errors; the rest is usually their consequences.
constexpr size_t kMaxLogInReason = 2000;

Prepared decided(const KeyContext& ctx, const Config& config, const std::string& name, ktune::Outcome outcome,
                 std::string reason) {
  Prepared p;
  cache::Measurement m = base_measurement(ctx, config, name);
  m.outcome = outcome;
  m.reason = std::move(reason);
  p.decided = std::move(m);
  return p;
}

/// Resources of every launch of the plan, checked against the limits. Fills p.resources (main
/// launch) and p.resources_json; returns why a launch cannot run, if one cannot.
std::optional<std::string> check_resources(const KeyContext& ctx, const kernel_templates::CompileSpec& cs,
                                           const kernel_templates::LaunchPlan& plan,
                                           const harness::CompileResult& compiled, Prepared& p) {
  nlohmann::json j = nlohmann::json::object();
  std::optional<std::string> violation;
  bool main_seen = false;
  for (const auto& launch : plan.launches) {
    Resources r;
    r.threads_per_block = int64_t{launch.dims.block.x} * launch.dims.block.y * launch.dims.block.z;
    r.dynamic_smem_bytes = launch.dims.dynamic_smem_bytes;
    harness::KernelResources k;
    if (auto it = compiled.lowered_names.find(launch.name_expression); it != compiled.lowered_names.end()) {
      if (auto rit = compiled.resources.find(it->second); rit != compiled.resources.end()) k = rit->second;
    }
    r.registers_per_thread = k.registers;
    r.static_smem_bytes = k.shared_bytes;
    r.local_bytes = k.local_bytes;
    if (!violation) {
      if (auto why = exceeds_limits(r, ctx.limits)) violation = launch.name_expression + ": " + *why;
    }
    const bool is_main =
        !cs.name_expressions.empty() && launch.name_expression == cs.name_expressions.front();
    if (is_main && !main_seen) {
      main_seen = true;
      p.resources = r;
      j["registers"] = k.registers;
      j["threads_per_block"] = r.threads_per_block;
      j["static_smem_bytes"] = k.shared_bytes;
      j["dynamic_smem_bytes"] = r.dynamic_smem_bytes;
      j["local_bytes"] = k.local_bytes;
      j["spill_store_bytes"] = k.spill_store_bytes;
      j["spill_load_bytes"] = k.spill_load_bytes;
      j["grid"] = {launch.dims.grid.x, launch.dims.grid.y, launch.dims.grid.z};
    }
  }
  j["launches"] = plan.launches.size();
  j["compile_ms"] = compiled.compile_ms;
  j["compile_cached"] = compiled.from_cache;
  j["arch"] = ctx.arch;
  p.resources_json = j.dump();
  return violation;
}

}  // namespace

harness::CompileResult KeyContext::reference_for(const kernel_templates::KernelSpec& spec) const {
  const kernel_templates::CompileSpec cs = spec.reference(problem).compile;
  if (cs.name_expressions.empty()) return {};  // saved outputs: nothing runs, nothing to compile
  std::string id = cs.source_name;
  for (const auto& e : cs.name_expressions) id += "|" + e;
  std::promise<harness::CompileResult> promise;
  std::shared_future<harness::CompileResult> future;
  bool owner = false;
  {
    std::lock_guard lock(reference_mutex_);
    auto [it, inserted] = references_.try_emplace(id);
    if (inserted) {
      it->second = promise.get_future().share();
      owner = true;
    }
    future = it->second;
  }
  if (owner) {
    try {
      promise.set_value(compile(kernel_templates::make_compile_request(cs, *sources, arch)));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }
  return future.get();
}

cache::Measurement base_measurement(const KeyContext& ctx, const Config& config, const std::string& name) {
  cache::Measurement m;
  m.shape = ctx.shape;
  m.dtype = ctx.problem.dtype;
  m.layout = ctx.layout;
  m.config_name = name;
  m.config_json = config.to_json_text();
  for (const auto* spec : kernel_templates::specs_of(ctx.kernel)) m.verified = m.verified && spec->verifies();
  m.work = spec_work(ctx.kernel, ctx.problem);
  return m;
}

measure::TimingOptions scaled_timing(const measure::TimingOptions& timing, double fidelity) {
  measure::TimingOptions t = timing;
  if (fidelity >= 1.0) return t;
  t.max_time_ms = std::max(1.0, timing.max_time_ms * fidelity);
  t.max_samples = std::max(timing.min_samples, static_cast<int>(std::lround(timing.max_samples * fidelity)));
  return t;
}

Prepared prepare_candidate(const KeyContext& ctx, const Config& config, const std::string& name,
                           double fidelity) {
  namespace kt = kernel_templates;
  if (harness::is_cublaslt_config(config)) {
    // A library algorithm: nothing to compile; verified against the kernel's GPU reference.
    if (ctx.compile_only) return decided(ctx, config, name, ktune::Outcome::kSkipped, "compile-only");
    const harness::CompileResult reference =
        ctx.reference_for(library_reference_spec(ctx.kernel, ctx.problem));
    Prepared p;
    measure::CandidateRequest r = library_candidate_request(ctx.kernel, ctx.problem, config, reference);
    r.name = name;
    r.device = ctx.device;
    r.timing = scaled_timing(ctx.timing, fidelity);
    p.request = std::move(r);
    return p;
  }
  const kt::KernelSpec& spec = kt::find_spec(ctx.kernel, config.variant);
  if (auto why = spec.rejection(ctx.problem, config))
    return decided(ctx, config, name, ktune::Outcome::kSkipped, *why);
  // A template the target lacks (wgmma off sm_90, e4m3 MMA before sm_89) is no compile error.
  if (auto why = spec.arch_rejection(ctx.arch))
    return decided(ctx, config, name, ktune::Outcome::kSkipped, *why);

  kt::CompileSpec cs;
  harness::CompileResult compiled;
  try {
    // A prebuilt cubin its compiler is still making is waited for here, in the compile pool.
    cs = spec.compile_spec(ctx.problem, config);
    compiled = ctx.compile(kt::make_compile_request(cs, *ctx.sources, ctx.arch));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kNoDevice) throw;  // NVRTC missing: nothing will compile
    std::string reason = e.what();
    if (!e.detail().empty()) reason += "\n" + e.detail().substr(0, kMaxLogInReason);
    return decided(ctx, config, name, ktune::Outcome::kCompileError, std::move(reason));
  }

  const kt::LaunchPlan plan = spec.launch_plan(ctx.problem, config);
  Prepared p;
  const std::optional<std::string> violation = check_resources(ctx, cs, plan, compiled, p);
  auto finish = [&](ktune::Outcome outcome, std::string reason) {
    Prepared d = decided(ctx, config, name, outcome, std::move(reason));
    d.decided->resources_json = p.resources_json;
    d.resources = p.resources;
    d.resources_json = p.resources_json;
    return d;
  };
  if (violation) return finish(ktune::Outcome::kExceedsLimits, *violation);
  if (ctx.compile_only) return finish(ktune::Outcome::kSkipped, "compile-only");

  // A user kernel described with `verify = false` has no reference (its results are stored unverified).
  const harness::CompileResult reference =
      spec.verifies() ? ctx.reference_for(spec) : harness::CompileResult{};
  const kt::CandidateParts parts = kt::make_candidate_parts(spec, ctx.problem, config, compiled, reference);
  // Every launch of the plan (split-K: the GEMM, its reduction, the atomic variant's zeroing) is
  // verified and timed as one sequence.
  measure::CandidateRequest r = kt::make_candidate_request(parts);
  r.name = name;
  r.device = ctx.device;
  r.timing = scaled_timing(ctx.timing, fidelity);
  p.request = std::move(r);
  return p;
}

void record_result(cache::Measurement& m, const measure::CandidateResult& result, std::string_view who) {
  m.outcome = result.outcome;
  m.reason = result.reason;
  if (result.stats) {
    const measure::SampleStats& s = *result.stats;
    m.stats = cache::Stats{s.median, s.min, s.mean, s.p90, s.stdev, static_cast<int64_t>(s.samples)};
  }
  if (m.outcome == Outcome::kOk && !m.stats) {
    m.outcome = Outcome::kLaunchError;
    m.reason = std::string(who) + " reported ok without timing statistics";
  }
  if (result.counters.is_object() && !result.counters.empty()) m.counters_json = result.counters.dump();
  m.sm_clock_mhz = result.sm_clock_mhz;
  m.temperature_c = result.temperature_c;
}

cache::Measurement to_measurement(const KeyContext& ctx, const Config& config, const std::string& name,
                                  const Prepared& prepared, const measure::CandidateResult& result) {
  cache::Measurement m = base_measurement(ctx, config, name);
  record_result(m, result, "the worker");
  nlohmann::json res = nlohmann::json::parse(prepared.resources_json);
  if (result.resources.is_object()) {
    for (const auto& [k, v] : result.resources.items()) res["worker_" + k] = v;
  }
  m.resources_json = res.dump();
  return m;
}

}  // namespace ktune::tuner::detail
