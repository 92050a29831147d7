#include "tuner/loop/tuning_loop.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "tuner/library/baseline_measurement.hpp"
#include "tuner/loop/compile_pool.hpp"
#include "tuner/loop/detail/candidate_preparer.hpp"
#include "tuner/loop/detail/key_run.hpp"
#include "tuner/loop/detail/stored_results.hpp"
#include "tuner/loop/progress.hpp"
#include "tuner/space/resource_limits.hpp"

namespace ktune::tuner {

namespace {

using detail::Clock;
using detail::drop_unusable_seeds;
using detail::InFlight;
using detail::KeyContext;
using detail::Known;
using detail::launch_count;
using detail::next_request_id;
using detail::Prepared;
using detail::resources_from_json;
using detail::seconds_since;
using detail::top_contenders;

/// Rounds of the interleaved re-time (measure::retime_interleaved's default: forward and reversed
/// twice, so no candidate always follows the same neighbour).
constexpr int kRetimeRounds = 4;

/// What the space's expressions see of `key` at `dims` (its shape, normalised) on `limits`.
ProblemContext problem_context(const TuneKey& key, std::vector<std::pair<std::string, int64_t>> dims,
                               const DeviceLimits& limits) {
  return {std::move(dims), static_cast<int64_t>(size_of(key.dtype)), key.dtype, key.layout, limits};
}

/// How long the oldest candidate in flight may keep the GPU waiting before a later one whose
/// compile is done goes first. Short against a Triton cubin still being compiled (seconds); long
/// against scheduling jitter, so candidates whose compiles keep ahead are measured in the order
/// proposed (the order adaptive strategies get their results in, and seeds in file order).
constexpr auto kFrontPatience = std::chrono::milliseconds(250);

/// The candidate to measure next, waiting for one: the oldest in flight once its compile is done
/// (or failed); after kFrontPatience without it, the first later one compiled without an error (a
/// later one's error is kept and raised when it reaches the front, as in order).
std::deque<InFlight>::iterator first_compiled(std::deque<InFlight>& inflight) {
  constexpr auto kPoll = std::chrono::milliseconds(2);
  const auto start = Clock::now();
  for (;;) {
    InFlight& front = inflight.front();
    if (front.got || front.failure ||
        front.future.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      return inflight.begin();
    if (Clock::now() - start >= kFrontPatience) {
      for (auto it = std::next(inflight.begin()); it != inflight.end(); ++it) {
        if (it->got) return it;
        if (it->failure || it->future.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
          continue;
        try {
          it->got = it->future.get();
          return it;
        } catch (...) {
          it->failure = std::current_exception();
        }
      }
    }
    front.future.wait_for(kPoll);
  }
}

}  // namespace

size_t planned_evaluations(const ConfigSpace& space, const TuneKey& key, const TuneOptions& options) {
  const ProblemContext pc = problem_context(key, key.shape.normalized(space.dims()).dims, options.limits);
  Enumeration e = space.enumerate(pc);
  if (!options.compile_only && options.max_launches > 0) {
    const kernel_templates::Problem problem{pc.dims, key.dtype, key.layout};
    std::erase_if(e.configs, [&](const Config& c) {
      return launch_count(key.kernel, problem, c) > options.max_launches;
    });
  }
  const size_t kept = e.configs.size();
  return options.budget == 0 ? kept : std::min(kept, options.budget);
}

TuningLoop::TuningLoop(cache::ConfigCache& db, const cache::GpuInfo& gpu, const cache::RunInfo& run,
                       TuneOptions options, LoopDeps deps)
    : db_(db), gpu_(gpu), options_(std::move(options)), deps_(std::move(deps)) {
  if (!deps_.compile) throw Error(ErrorKind::kBadInput, "tuning loop without a compile function");
  if (deps_.sources == nullptr) throw Error(ErrorKind::kBadInput, "tuning loop without template sources");
  if (!options_.compile_only && deps_.measurer == nullptr)
    throw Error(ErrorKind::kBadInput, "tuning loop without a measurer (only --compile-only needs none)");
  gpu_id_ = db_.upsert_gpu(gpu_);
  run_id_ = db_.begin_run(run);
  pool_ = std::make_unique<CompilePool>(options_.compile_threads);
  if (options_.lookahead == 0) options_.lookahead = 2 * pool_->threads();
}

TuningLoop::~TuningLoop() = default;

KeySummary TuningLoop::tune(const ConfigSpace& space, const TuneKey& key) {
  KeyRun run{space, key};
  if (!start_key(run)) return run.s;
  while (!stopping() && fill_lookahead(run) && take_compiled(run)) measure_and_record(run);
  KeySummary& s = run.s;
  if (stopping() && s.error.empty()) {
    // Compiles still running finish in the pool (the loop's destructor waits for them); their
    // results are not stored, and the next run compiles them from the compile cache.
    run.inflight.clear();
    s.stopped = true;
    return s;
  }
  if (!s.error.empty() || options_.compile_only) return s;
  measure_library_candidates(run);
  if (deps_.baseline != nullptr) {
    // cuBLAS on the same key, same timing options, same run: the speed-up reports show per shape.
    const auto t = Clock::now();
    record_cublas_baseline(db_, run_id_, gpu_id_, run.kernel_id, key.kernel, run.problem, options_.timing,
                           *deps_.baseline);
    s.measure_s += seconds_since(t);
  }
  if (!stopping()) finish_key(run);
  s.stopped = stopping() && !s.winner;
  return s;
}

bool TuningLoop::start_key(KeyRun& run) {
  const TuneKey& key = run.key;
  KeySummary& s = run.s;
  s.kernel = key.kernel;
  s.label = key.shape.label;
  s.dtype = key.dtype;
  s.layout = key.layout;
  if (run.space.kernel() != key.kernel) {
    throw Error(ErrorKind::kBadInput, fmt::format("space {} is for kernel '{}', not '{}'",
                                                  run.space.source_name(), run.space.kernel(), key.kernel));
  }
  const NamedShape shape = key.shape.normalized(run.space.dims());
  s.shape = shape.canonical();
  run.problem = {shape.dims, key.dtype, key.layout};
  std::optional<Enumeration> e = enumerate_key(run, shape);
  if (!e) return false;

  run.source_hash = deps_.sources->hash(kernel_templates::kernel_source_files(key.kernel));
  run.kernel_id = db_.upsert_kernel({key.kernel, run.source_hash});
  if (!options_.retune)
    run.stored = detail::load_stored_results(db_, gpu_id_, run.kernel_id, s.shape, key.dtype, key.layout);
  run.ctx = key_context(run);
  // The winners of this shape's other layouts lead the seeds (a key tuned after its sibling).
  const std::vector<Config> siblings = detail::sibling_winners(
      db_, gpu_id_, run.kernel_id, key.kernel, s.shape, key.dtype, key.layout, run.space, e->configs);
  std::erase_if(e->seeds, [&](const Config& c) {
    return std::find(siblings.begin(), siblings.end(), c) != siblings.end();
  });
  e->seeds.insert(e->seeds.begin(), siblings.begin(), siblings.end());
  s.sibling_seeds = siblings.size();
  StrategyOptions so;
  so.budget = options_.budget;
  so.seed = options_.seed;
  so.seeds = e->seeds;
  run.strategy = make_strategy(options_.strategy, e->configs, so);
  if (deps_.progress != nullptr)
    deps_.progress->set_key(fmt::format(
        "{} {} {} {}{}", key.kernel, s.shape, to_string(key.dtype), key.layout,
        options_.devices.size() > 1 ? fmt::format(" on devices {}", fmt::join(options_.devices, ","))
                                    : std::string()));
  return true;
}

std::optional<Enumeration> TuningLoop::enumerate_key(KeyRun& run, const NamedShape& shape) {
  KeySummary& s = run.s;
  const ProblemContext pc = problem_context(run.key, shape.dims, options_.limits);
  Enumeration e;
  try {
    e = run.space.enumerate(pc);
  } catch (const Error& err) {
    if (err.kind() != ErrorKind::kBadInput) throw;
    s.error = err.what();
    return std::nullopt;
  }
  s.space_points = e.total;
  if (!options_.compile_only && options_.max_launches > 0) {
    std::erase_if(e.configs, [&](const Config& c) {
      return launch_count(run.key.kernel, run.problem, c) > options_.max_launches;
    });
    s.unmeasurable = e.total - e.pruned - e.configs.size();
    if (e.configs.empty()) {
      s.error =
          fmt::format("every config the space keeps for {} needs more than max_launches = {} launch(es)",
                      s.shape, options_.max_launches);
      return std::nullopt;
    }
  }
  s.candidates = e.configs.size();
  drop_unusable_seeds(e, run.key.kernel, options_.arch);
  s.seeds = e.seeds.size();
  s.seed_rejected = e.seed_rejected;
  return e;
}

std::shared_ptr<KeyContext> TuningLoop::key_context(const KeyRun& run) const {
  auto ctx = std::make_shared<KeyContext>();
  ctx->kernel = run.key.kernel;
  ctx->layout = run.key.layout;
  ctx->shape = run.s.shape;
  ctx->problem = run.problem;
  ctx->limits = options_.limits;
  ctx->arch = options_.arch;
  ctx->compile_only = options_.compile_only;
  ctx->device = options_.device;
  ctx->timing = options_.timing;
  ctx->sources = deps_.sources;
  ctx->compile = deps_.compile;
  return ctx;
}

void TuningLoop::note(KeyRun& run, const Candidate& c, const std::string& name, Outcome outcome,
                      std::optional<double> us, int64_t id, const Resources& resources) {
  run.strategy->report(c.config, us, c.fidelity);
  tally(run, c.config, name, outcome, us, id, c.fidelity, resources);
}

void TuningLoop::tally(KeyRun& run, const Config& config, const std::string& name, Outcome outcome,
                       std::optional<double> us, int64_t id, double fidelity, const Resources& resources) {
  ++run.s.evaluations;
  ++run.s.outcomes[std::string(ktune::to_string(outcome))];
  if (us) {
    Known& k = run.known[name];
    if (fidelity >= k.fidelity) k = Known{config, id, *us, fidelity, resources};
    if (!run.best_us || *us < *run.best_us) {
      run.best_us = us;
      if (deps_.progress != nullptr) deps_.progress->set_best(name, *us);
    }
  }
  if (deps_.progress != nullptr) deps_.progress->advance();
}

bool TuningLoop::fill_lookahead(KeyRun& run) {
  // Keep the compile stage `lookahead` candidates ahead of the GPU.
  while (run.inflight.size() < options_.lookahead) {
    std::vector<Candidate> batch = run.strategy->next_batch(options_.lookahead - run.inflight.size());
    if (batch.empty()) break;
    for (const Candidate& c : batch) {
      const std::string name = run.space.canonical_name(c.config, run.key.dtype, run.key.layout);
      auto hit = run.stored.find(name);
      if (hit != run.stored.end() && detail::answers(hit->second, c.fidelity, options_.compile_only)) {
        ++run.s.from_cache;
        std::optional<double> us;
        if (hit->second.outcome == Outcome::kOk && hit->second.stats) us = hit->second.stats->median_us;
        note(run, c, name, hit->second.outcome, us, hit->second.measurement_id,
             resources_from_json(hit->second.resources_json));
      } else {
        auto task = [ctx = run.ctx, config = c.config, name, fidelity = c.fidelity] {
          return detail::prepare_candidate(*ctx, config, name, fidelity);
        };
        run.inflight.push_back({c, name, pool_->submit(std::move(task)), std::nullopt, nullptr});
      }
    }
  }
  if (!run.inflight.empty()) return true;
  if (!run.strategy->done()) run.s.error = "the search strategy stalled (nothing proposed, nothing awaited)";
  return false;
}

bool TuningLoop::take_compiled(KeyRun& run) {
  auto& done = run.done;
  done.clear();
  // Take the front once compiled (after a while, a later compiled one: a slow compile, such as
  // a prebuilt cubin its compiler is still making, does not hold the GPU while later ones are
  // ready), then every following one that is compiled and needs no GPU, and, for a measurer with
  // several workers (--devices), candidates to measure until each worker has one (waiting for
  // their compiles); their rows go to the cache in one transaction.
  const auto wait_start = Clock::now();
  Prepared first;
  auto taken = run.inflight.begin();
  try {
    taken = first_compiled(run.inflight);
    if (taken->failure) std::rethrow_exception(taken->failure);
    first = taken->got ? std::move(*taken->got) : taken->future.get();
  } catch (const Error& err) {
    // Not the candidate's fault (the reference does not compile, a source is missing): this key
    // cannot be tuned; NVRTC or the driver missing ends the sweep.
    if (err.kind() == ErrorKind::kNoDevice) throw;
    run.s.error = err.what();
    return false;
  }
  run.s.compile_wait_s += seconds_since(wait_start);
  done.emplace_back(std::move(*taken), std::move(first));
  run.inflight.erase(taken);
  const size_t workers = deps_.measurer != nullptr ? std::max<size_t>(1, deps_.measurer->parallelism()) : 1;
  size_t to_measure = done.back().second.decided ? 0 : 1;
  if (workers == 1 && to_measure == 1) return true;
  while (!run.inflight.empty()) {
    InFlight& next = run.inflight.front();
    if (!next.got) {
      const bool wait = to_measure > 0 && to_measure < workers;  // a worker would idle otherwise
      if (!wait && next.future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) break;
      try {
        next.got = next.future.get();
      } catch (...) {
        next.failure = std::current_exception();  // raised again when it reaches the front
        break;
      }
    }
    if (!next.got->decided) {
      // One worker: candidates to measure are taken one at a time (each its own transaction).
      if (workers == 1 || to_measure >= workers) break;
      ++to_measure;
    }
    Prepared p = std::move(*next.got);
    done.emplace_back(std::move(next), std::move(p));
    run.inflight.pop_front();
  }
  return true;
}

void TuningLoop::measure_and_record(KeyRun& run) {
  auto& done = run.done;
  // Every candidate still to measure, in one call: a pool of workers (--devices) measures them at
  // once, a single worker one after the other.
  std::vector<size_t> to_measure;
  std::vector<measure::CandidateRequest> requests;
  if (!stopping()) {  // when stopping, nothing is measured: a later run proposes it again
    for (size_t i = 0; i < done.size(); ++i) {
      if (done[i].second.decided) continue;
      measure::CandidateRequest& request = *done[i].second.request;
      request.id = next_request_id();
      to_measure.push_back(i);
      requests.push_back(request);
    }
  }
  std::vector<measure::CandidateResult> results;
  if (!requests.empty()) {
    const auto t = Clock::now();
    results = deps_.measurer->measure_many(std::move(requests));
    run.s.measure_s += seconds_since(t);
  }
  std::vector<cache::Measurement> rows;
  std::vector<size_t> kept;  // indices into done of the rows
  size_t next_result = 0;
  for (size_t i = 0; i < done.size(); ++i) {
    auto& [item, prepared] = done[i];
    if (prepared.decided) {
      rows.push_back(*prepared.decided);
    } else {
      if (next_result >= to_measure.size() || to_measure[next_result] != i) continue;  // not measured
      const measure::CandidateResult& r = results.at(next_result++);
      if (r.interrupted) continue;  // cut short by the stop: says nothing about the config
      rows.push_back(detail::to_measurement(*run.ctx, item.candidate.config, item.name, prepared, r));
    }
    rows.back().fidelity = item.candidate.fidelity;
    kept.push_back(i);
  }
  if (rows.empty()) return;
  const std::vector<int64_t> ids = db_.record(run_id_, gpu_id_, run.kernel_id, rows);
  for (size_t j = 0; j < kept.size(); ++j) {
    const cache::Measurement& m = rows[j];
    const auto& [item, prepared] = done[kept[j]];
    std::optional<double> us;
    if (m.outcome == Outcome::kOk && m.stats) us = m.stats->median_us;
    ++run.s.measured;
    if (us) ++run.new_successes;
    note(run, item.candidate, item.name, m.outcome, us, ids.at(j), prepared.resources);
  }
}

bool TuningLoop::keep_stored_winner(KeyRun& run) {
  KeySummary& s = run.s;
  if (run.known.empty()) {
    std::string counts;
    for (const auto& [outcome, n] : s.outcomes)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, outcome);
    s.error =
        fmt::format("no config was measured successfully ({})", counts.empty() ? "none evaluated" : counts);
    return true;
  }
  if (run.new_successes > 0 || options_.retune) return false;
  // Everything came from the cache: the stored winner stands.
  const cache::Lookup lookup{gpu_.name,     run.key.kernel,  s.shape,
                             run.key.dtype, run.source_hash, run.key.layout};
  const auto best = db_.best(lookup, false);
  if (!best) return false;
  s.winner = best->config_name;
  s.winner_config_json = best->config_json;
  s.winner_median_us = best->stats.median_us;
  s.winner_kept = true;
  return true;
}

std::vector<cache::Measurement> TuningLoop::retime(KeyRun& run) {
  const auto& top = run.top;
  auto& prepared = run.retimed;
  std::vector<std::future<Prepared>> futures;
  for (const auto& [name, k] : top) {
    futures.push_back(pool_->submit([ctx = run.ctx, config = k->config, name = name] {
      return detail::prepare_candidate(*ctx, config, name, 1.0);
    }));
  }
  std::vector<measure::CandidateRequest> requests;
  std::vector<size_t> top_index;
  for (size_t i = 0; i < futures.size(); ++i) {
    Prepared p = futures[i].get();
    if (!p.request) continue;  // cannot happen for a config that was measured; be safe
    p.request->id = next_request_id();
    requests.push_back(*p.request);
    prepared.push_back(std::move(p));
    top_index.push_back(i);
  }
  std::vector<cache::Measurement> rows;
  if (requests.empty()) return rows;
  const auto t = Clock::now();
  const std::vector<measure::CandidateResult> retimed = deps_.measurer->retime(requests, kRetimeRounds);
  const bool interrupted = std::any_of(retimed.begin(), retimed.end(),
                                       [](const measure::CandidateResult& r) { return r.interrupted; });
  if (interrupted) return rows;  // a stop cut the re-time short: name no winner from part of it
  for (size_t i = 0; i < retimed.size() && i < requests.size(); ++i) {
    const Known& k = *top[top_index[i]].second;
    rows.push_back(
        detail::to_measurement(*run.ctx, k.config, top[top_index[i]].first, prepared[i], retimed[i]));
    if (options_.counters && rows.back().outcome == Outcome::kOk) count(requests[i], rows.back());
    rows.back().fidelity = 1.0;
  }
  run.s.measure_s += seconds_since(t);
  return rows;
}

void TuningLoop::count(measure::CandidateRequest request, cache::Measurement& row) {
  // A separate profiling pass (never the timed runs): the fewest samples the protocol allows.
  request.timing.counters = true;
  request.timing.max_samples = request.timing.min_samples;
  request.timing.max_time_ms = std::min(request.timing.max_time_ms, 100.0);
  const measure::CandidateResult counted = deps_.measurer->measure(request);
  if (counted.counters.is_object() && !counted.counters.empty()) row.counters_json = counted.counters.dump();
}

void TuningLoop::finish_key(KeyRun& run) {
  if (keep_stored_winner(run)) return;
  run.top = top_contenders(run.known, options_.timing.retime_top_k);
  const auto& top = run.top;
  const std::vector<cache::Measurement> rows = retime(run);
  if (rows.empty() && stopping()) return;  // stopped during the re-time: the next run names the winner
  const auto& prepared = run.retimed;
  const std::vector<int64_t> ids =
      rows.empty() ? std::vector<int64_t>{} : db_.record(run_id_, gpu_id_, run.kernel_id, rows);

  auto library_preference = [&run](const std::string& name) {
    const auto it = run.library_rank.find(name);
    return it == run.library_rank.end() ? int64_t{0} : it->second;
  };
  std::vector<Contender> contenders;
  std::vector<int64_t> contender_ids;
  std::vector<std::string> contender_json;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].outcome != Outcome::kOk || !rows[i].stats) continue;
    contenders.push_back({rows[i].config_name, rows[i].stats->median_us, prepared[i].resources,
                          library_preference(rows[i].config_name)});
    contender_ids.push_back(ids[i]);
    contender_json.push_back(rows[i].config_json);
  }
  if (contenders.empty()) {
    // Every re-time failed (a flaky config, a lost worker): the original measurements decide.
    for (const auto& [name, k] : top) {
      contenders.push_back({name, k->median_us, k->resources, library_preference(name)});
      contender_ids.push_back(k->measurement_id);
      contender_json.push_back(k->config.to_json_text());
    }
  }
  const size_t w = pick_winner(contenders, options_.limits, options_.tie_noise);
  db_.set_best(contender_ids[w]);
  run.s.winner = contenders[w].name;
  run.s.winner_median_us = contenders[w].median_us;
  run.s.winner_config_json = contender_json[w];
}

}  // namespace ktune::tuner
