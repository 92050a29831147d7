#include "measure/worker_measurer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "ktune/error.hpp"
#include "measure/buffer_guard.hpp"
#include "measure/candidate_launch.hpp"
#include "measure/candidate_sequence.hpp"
#include "measure/cupti_activity.hpp"
#include "measure/cupti_profiler.hpp"
#include "measure/gpu_compare.hpp"
#include "measure/kernel_timer.hpp"
#include "measure/nvml.hpp"
#include "measure/poison.hpp"
#include "measure/random_fill.hpp"

namespace ktune::measure {

namespace {
double median_of(std::vector<double> v) { return summarize(v).median; }

/// Launches timed by the CUPTI Activity pass: enough for a stable median, few enough to be cheap.
constexpr int kActivityLaunches = 20;

const BufferSpec& spec_of(const CandidateRequest& r, const std::string& name) {
  for (const BufferSpec& b : r.buffers) {
    if (b.name == name) return b;
  }
  throw Error(ErrorKind::kBadInput,
              fmt::format("check names buffer '{}', which the request does not declare", name));
}
}  // namespace

/// One candidate while it is timed: its loaded sequence, the buffer sets it rotates over and the
/// timer (kernel_timer.hpp, the one timing path).
struct WorkerMeasurer::Timed {
  Timed(const CandidateRequest& r, LoadedSequence& seq, std::vector<BufferSet> first)
      : req(r), sequence(seq), sets(std::move(first)) {}

  const CandidateRequest& req;
  LoadedSequence& sequence;
  std::vector<BufferSet> sets;
  std::unique_ptr<KernelTimer> timer;
};

WorkerMeasurer::WorkerMeasurer(int ordinal) : device_(harness::query_device(ordinal)), context_(ordinal) {
  KTUNE_CU_CHECK(harness::driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
}

WorkerMeasurer::~WorkerMeasurer() {
  if (stream_) harness::driver().cuStreamDestroy(stream_);
}

const UtilityKernels& WorkerMeasurer::utility() {
  if (!utility_) utility_ = std::make_unique<UtilityKernels>(device_.arch());
  return *utility_;
}

CandidateResult WorkerMeasurer::measure(const CandidateRequest& req, bool* context_ok) {
  *context_ok = true;
  CandidateResult res;
  res.id = req.id;
  res.name = req.name;
  res.flush = std::string(to_string(req.timing.flush));
  std::string phase = "request";
  try {
    req.timing.validate();
    if (req.device != device_.ordinal) {
      throw Error(ErrorKind::kBadInput, fmt::format("request is for device {}, this worker runs on device {}",
                                                    req.device, device_.ordinal));
    }
    phase = "load";
    LoadedSequence sequence(req.launches, req.main_launch, device_);
    res.resources = sequence.resources();
    if (const std::string why = sequence.limit_violation(); !why.empty()) {
      res.outcome = Outcome::kExceedsLimits;
      res.reason = why;
      return res;
    }
    std::optional<LoadedKernel> reference;
    if (req.reference) reference.emplace(*req.reference, device_);

    phase = "inputs";
    std::vector<BufferSet> sets;
    sets.push_back(fill_inputs(req));
    sequence.bind({&sets[0]});
    if (reference) {
      phase = "reference";
      reference->bind({&sets[0]});
      reference->launch(0, stream_);
      KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(stream_));
    }
    phase = "first run";
    sequence.launch(0, stream_);
    KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(stream_));
    phase = "guards";
    if (auto why = check_guards(sets[0], stream_)) {
      res.outcome = Outcome::kIncorrect;
      res.reason = *why;
      return res;
    }
    if (!req.checks.empty()) {
      phase = "verify";
      if (!verify(req, sets[0], res)) return res;
    }

    phase = "flush set-up";
    Timed run(req, sequence, std::move(sets));
    add_rotation_sets(run);
    res.flush = run.timer->plan().describe();
    phase = "timing";
    time_samples(run, res);
    if (req.timing.activity_timer) {
      phase = "activity timer";
      activity_pass(run, res);
    }
    if (req.timing.counters) {
      phase = "counters";
      counter_pass(run, res);
    } else {
      res.counters["available"] = false;
      res.counters["reason"] = "not requested";
    }
    res.outcome = Outcome::kOk;
    return res;
  } catch (const Error& e) {
    classify_failure(e, phase, res, context_ok);
    return res;
  } catch (const std::exception& e) {
    res.stats.reset();
    res.outcome = Outcome::kLaunchError;
    res.reason = fmt::format("{}: {}", phase, e.what());
    return res;
  }
}

BufferSet WorkerMeasurer::fill_inputs(const CandidateRequest& req) {
  BufferSet set = allocate_buffers(req.buffers);
  write_guards(set, stream_);
  for (std::size_t i = 0; i < req.buffers.size(); ++i) {
    const BufferSpec& b = req.buffers[i];
    const CUdeviceptr p = set.at(b.name);
    if (b.init == BufferSpec::Init::kFill) {
      // Distinct stream of the counter RNG per buffer: seed + index * 2^32.
      fill_buffer(utility(), p, b.dtype, b.integer, b.count, b.fill, req.timing.seed + (uint64_t{i} << 32),
                  stream_);
    } else {
      const bool integer_reference =
          b.integer && std::any_of(req.checks.begin(), req.checks.end(),
                                   [&](const OutputCheck& c) { return c.reference == b.name; });
      poison(p, b.bytes(), stream_, integer_reference ? kIntegerReferencePoisonByte : kPoisonByte);
    }
  }
  return set;
}

bool WorkerMeasurer::verify(const CandidateRequest& req, const BufferSet& set, CandidateResult& res) {
  for (const OutputCheck& c : req.checks) {
    const BufferSpec& out = spec_of(req, c.output);
    const BufferSpec& ref = spec_of(req, c.reference);
    if (out.integer) {
      if (!verify_integers(c, out, ref, set, res)) return false;
      continue;
    }
    if (out.count != ref.count || ref.integer || (out.dtype != ref.dtype && ref.dtype != DType::kF32)) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("check '{}' vs '{}': lengths differ or the reference is neither {} nor f32",
                              c.output, c.reference, to_string(out.dtype)));
    }
    const ErrorMetrics m = gpu_compare(utility(), set.at(c.output), out.dtype, set.at(c.reference), ref.dtype,
                                       out.count, stream_);
    const Verdict v = judge(m, out.dtype, c.rel_l2, c.abs);
    res.rel_err = std::max(res.rel_err, m.rel_err);
    res.max_abs_err = std::max(res.max_abs_err, m.max_abs_err);
    if (!v.ok) {
      res.outcome = Outcome::kIncorrect;
      res.reason = fmt::format("output '{}' vs '{}': {}", c.output, c.reference, v.reason);
      return false;
    }
  }
  return true;
}

bool WorkerMeasurer::verify_integers(const OutputCheck& c, const BufferSpec& out, const BufferSpec& ref,
                                     const BufferSet& set, CandidateResult& res) {
  if (out.count != ref.count || out.integer != ref.integer) {
    throw Error(ErrorKind::kBadInput, fmt::format("check '{}' vs '{}': lengths or types differ ({} vs {})",
                                                  c.output, c.reference, out.type_name(), ref.type_name()));
  }
  const ErrorMetrics m =
      gpu_compare(utility(), set.at(c.output), set.at(c.reference), *out.integer, out.count, stream_);
  const Verdict v = judge_absolute(m, c.abs.value_or(0), to_string(*out.integer));
  res.rel_err = std::max(res.rel_err, m.rel_err);
  res.max_abs_err = std::max(res.max_abs_err, m.max_abs_err);
  if (!v.ok) {
    res.outcome = Outcome::kIncorrect;
    res.reason = fmt::format("output '{}' vs '{}': {}", c.output, c.reference, v.reason);
  }
  return v.ok;
}

void WorkerMeasurer::add_rotation_sets(Timed& run) {
  const TimingOptions& t = run.req.timing;
  uint64_t set_bytes = 0;
  for (const BufferSpec& b : run.req.buffers) set_bytes += b.bytes();
  FlushPlan plan = plan_flush(t, device_.l2_bytes, set_bytes, free_device_bytes());
  for (int s = 1; s < plan.sets; ++s) run.sets.push_back(clone_buffers(run.sets[0], stream_));
  std::vector<const BufferSet*> set_ptrs;
  for (const BufferSet& s : run.sets) set_ptrs.push_back(&s);
  run.sequence.bind(set_ptrs);
  run.timer = std::make_unique<KernelTimer>(t, std::move(plan), device_.l2_bytes, stream_, &utility());
}

void WorkerMeasurer::time_samples(Timed& run, CandidateResult& res) {
  const TimingResult r = run.timer->time([&](std::size_t set) { run.sequence.launch(set, stream_); });
  res.launches_per_sample = r.launches_per_sample;
  // How it was timed, stored with the measurement (its resources): the flush actually used and
  // whether samples were CUDA-graph batches.
  res.resources["flush"] = res.flush;
  res.resources["launches_per_sample"] = r.launches_per_sample;
  res.resources["device"] = device_.ordinal;  // which card measured it (ktune tune --devices)
  res.samples_us = r.samples_us;
  res.stats = r.stats;
  res.stop_reason = std::string(to_string(r.stop));
  res.drift = r.drift;
  const NvmlReading nvml = nvml_read(device_.pci_bus_id);
  res.sm_clock_mhz = nvml.sm_clock_mhz;
  res.temperature_c = nvml.temperature_c;
  if (!nvml.unknown_reason.empty()) res.resources["nvml_unknown_reason"] = nvml.unknown_reason;
  if (run.req.bytes_moved > 0) res.gbps = run.req.bytes_moved / (res.stats->median * 1e-6) / 1e9;
  if (run.req.flops > 0) res.tflops = run.req.flops / (res.stats->median * 1e-6) / 1e12;
}

void WorkerMeasurer::activity_pass(Timed& run, CandidateResult& res) {
  if (run.sequence.is_library_call()) {
    // Its kernels carry the library's names, and how many a call enqueues is the library's affair.
    res.counters["activity_reason"] = "a library call's kernels are not matched by name";
    return;
  }
  std::string why;
  auto activity = ActivityTimer::start(&why);
  if (activity) {
    for (int i = 0; i < kActivityLaunches; ++i) {
      run.timer->flush();
      run.sequence.launch(static_cast<std::size_t>(i) % run.sets.size(), stream_);
    }
    KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(stream_));
    const std::size_t per_run = run.sequence.size();
    const auto us = activity->stop(run.sequence.functions(), kActivityLaunches * per_run);
    // Records in start order; the launches of one run are consecutive (one stream).
    std::vector<double> runs;
    for (std::size_t i = 0; i + per_run <= us.size(); i += per_run) {
      double sum = 0;
      for (std::size_t j = 0; j < per_run; ++j) sum += us[i + j];
      runs.push_back(sum);
    }
    if (!runs.empty()) {
      res.activity_median_us = median_of(runs);
    } else {
      why = fmt::format("CUPTI delivered {} kernel records for {}, fewer than one run's {}", us.size(),
                        fmt::join(run.sequence.functions(), ", "), per_run);
    }
  }
  if (!why.empty()) res.counters["activity_reason"] = why;
}

void WorkerMeasurer::counter_pass(Timed& run, CandidateResult& res) {
  run.timer->flush();
  KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(stream_));
  nlohmann::json c = profile_counters(context_.get(), device_.ordinal, run.req.timing.metrics, [&] {
    run.sequence.launch(0, stream_);
    KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(stream_));
  });
  for (auto& [k, v] : c.items()) res.counters[k] = v;
}

void WorkerMeasurer::classify_failure(const Error& e, const std::string& phase, CandidateResult& res,
                                      bool* context_ok) {
  res.stats.reset();
  res.samples_us.clear();
  // A sticky error (illegal address, launch failure, ...) leaves the context unusable: every later
  // call fails the same way. cuCtxSynchronize tells the two kinds apart without a list of codes.
  const CUresult health =
      harness::driver_table_or_null() ? harness::driver().cuCtxSynchronize() : CUDA_ERROR_NOT_INITIALIZED;
  const std::string what = fmt::format("{}: {}", phase, e.what());
  if (health != CUDA_SUCCESS) {
    *context_ok = false;
    res.outcome = Outcome::kCrashed;
    res.reason = fmt::format("{} (context lost: {})", what, harness::cu_error_name(health));
  } else if (e.api_code() == "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES") {
    res.outcome = Outcome::kExceedsLimits;
    res.reason = what;
  } else {
    res.outcome = Outcome::kLaunchError;
    res.reason = what;
  }
}

}  // namespace ktune::measure
