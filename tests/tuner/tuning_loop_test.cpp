// The tuning loop without a GPU: a fake compiler and a fake measurer stand in for NVRTC and the
// worker. A sweep killed mid-way (SIGKILL in a child process, or an exception) and restarted
// measures nothing twice and loses nothing; failures are stored with their outcome; compile-only
// records resources, compile errors and exceeds_limits; the winner follows pick_winner's rule.

#include "tuner/loop/tuning_loop.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "kernel_templates/embedded_sources.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/search/ordered_search.hpp"

namespace ktune::tuner {
namespace {

using test::FakeMeasurer;

const cache::GpuInfo kGpu{"Fake GPU", 9, 0, 132, int64_t{141} << 30, "{}"};

ConfigSpace gemm_space() { return ConfigSpace::load(configs_dir() / "spaces" / "gemm.toml"); }

TuneKey key(int64_t m, int64_t n, int64_t k) {
  return {"gemm", NamedShape{"test", {{"m", m}, {"n", n}, {"k", k}}}, DType::kBF16, "nt"};
}

TuneOptions options(size_t budget, std::string kind = "exhaustive") {
  TuneOptions o;
  o.strategy = kind;
  o.budget = budget;
  o.compile_threads = 2;
  o.counters = false;
  return o;
}

struct Sweep {
  KeySummary summary;
  std::vector<std::string> measured;
  std::vector<std::string> retimed;
};

Sweep run_sweep(const std::filesystem::path& db_path, const TuneKey& k, const TuneOptions& o,
                std::function<void(int)> before_measure = {}) {
  auto db = cache::ConfigCache::open(db_path);
  static const auto sources = kernel_templates::SourceLibrary::builtin();
  FakeMeasurer measurer;
  measurer.before_measure = std::move(before_measure);
  LoopDeps deps{test::fake_compile(), &measurer, &sources, nullptr};
  Sweep out;
  {
    TuningLoop loop(db, kGpu, cache::RunInfo{}, o, deps);
    out.summary = loop.tune(gemm_space(), k);
  }
  out.measured = measurer.measured;
  out.retimed = measurer.retimed;
  return out;
}

/// Measures each batch on one thread a request, started last to first (as a pool of workers on
/// several GPUs finishes them in any order).
class ParallelFakeMeasurer : public FakeMeasurer {
 public:
  std::vector<measure::CandidateResult> measure_many(
      std::vector<measure::CandidateRequest> requests) override {
    batches.push_back(requests.size());
    std::vector<measure::CandidateResult> out(requests.size());
    std::vector<std::thread> threads;
    for (size_t i = requests.size(); i-- > 0;)
      threads.emplace_back([&, i] { out[i] = measure(requests[i]); });
    for (auto& t : threads) t.join();
    return out;
  }
  std::size_t parallelism() const override { return 4; }
  std::vector<size_t> batches;
};

/// A strategy added through the registry only (no list elsewhere names it): the candidates last
/// to first, the seeds ignored. What it was offered is kept for the test to check against.
std::vector<Config> g_last_first_offered;

TEST(TuningLoop, AStrategyAddedToTheRegistryDrivesTheLoop) {
  if (std::none_of(strategies().begin(), strategies().end(),
                   [](const StrategyEntry& e) { return e.name == "last-first"; })) {
    register_strategy(
        {"last-first", "the candidates last to first (a test's toy)",
         [](std::vector<Config> c, const StrategyOptions& o) -> std::unique_ptr<SearchStrategy> {
           std::reverse(c.begin(), c.end());
           g_last_first_offered = c;
           StrategyOptions no_seeds = o;
           no_seeds.seeds.clear();
           return std::make_unique<OrderedSearch>(std::move(c), no_seeds, false);
         }});
  }
  EXPECT_THROW(register_strategy({"last-first", "again", strategies().front().make}), Error);
  EXPECT_EQ(parse_strategy("last-first"), "last-first");
  EXPECT_NE(strategy_names().find("last-first"), std::string::npos);

  test::TempDir dir;
  const Sweep toy = run_sweep(dir / "toy.db", key(16, 4096, 4096), options(3, "last-first"));
  const Sweep exhaustive = run_sweep(dir / "exhaustive.db", key(16, 4096, 4096), options(3, "exhaustive"));
  ASSERT_GE(g_last_first_offered.size(), 6u);
  EXPECT_EQ(toy.summary.evaluations, 3u);
  ASSERT_EQ(toy.measured.size(), 3u);
  // The loop measured the toy's proposals: the last candidates of the space, not exhaustive's first.
  for (const auto& name : toy.measured)
    EXPECT_EQ(std::count(exhaustive.measured.begin(), exhaustive.measured.end(), name), 0) << name;
}

TEST(TuningLoop, APoolOfWorkersMeasuresEachCandidateOnceAndNamesTheSameWinner) {
  test::TempDir dir;
  const Sweep one = run_sweep(dir / "one.db", key(16, 512, 1024), options(30));
  auto db = cache::ConfigCache::open(dir / "pool.db");
  static const auto sources = kernel_templates::SourceLibrary::builtin();
  ParallelFakeMeasurer pool;
  KeySummary s;
  {
    TuningLoop loop(db, kGpu, cache::RunInfo{}, options(30),
                    LoopDeps{test::fake_compile(), &pool, &sources, nullptr});
    s = loop.tune(gemm_space(), key(16, 512, 1024));
  }
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.measured, 30u);
  std::vector<std::string> a = one.measured, b = pool.measured;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);  // the same candidates, each once
  EXPECT_EQ(std::adjacent_find(b.begin(), b.end()), b.end());
  EXPECT_GT(*std::max_element(pool.batches.begin(), pool.batches.end()), 1u) << "no batch ran in parallel";
  ASSERT_TRUE(s.winner && one.summary.winner);
  EXPECT_EQ(*s.winner, *one.summary.winner);
  // Each stored row carries its own candidate's result: the fake time of its name.
  for (const auto& m : test::all_measurements(db)) {
    if (m.m.outcome != Outcome::kOk || !m.m.stats) continue;
    const double want = test::fake_time_us(m.m.config_name);
    EXPECT_NEAR(m.m.stats->median_us, want, want * 0.002) << m.m.config_name;
  }
}

TEST(TuningLoop, StoresEveryResultAndNamesTheFastestWinner) {
  test::TempDir dir;
  const Sweep s = run_sweep(dir / "k.db", key(16, 512, 1024), options(30));
  ASSERT_TRUE(s.summary.error.empty()) << s.summary.error;
  EXPECT_EQ(s.summary.evaluations, 30u);
  EXPECT_EQ(s.summary.measured, 30u);
  EXPECT_EQ(s.summary.from_cache, 0u);

  auto db = cache::ConfigCache::open(dir / "k.db");
  const auto rows = test::all_measurements(db);
  // 30 evaluations, then the re-time of the best few.
  ASSERT_EQ(rows.size(), 30u + s.retimed.size());
  size_t incorrect = 0;
  double fastest = 1e30;
  for (size_t i = 0; i < 30; ++i) {
    const auto& m = rows[i].m;
    EXPECT_EQ(m.shape, "m=16,n=512,k=1024");
    EXPECT_EQ(m.layout, "nt");
    EXPECT_TRUE(m.config_name.starts_with("gemm.bf16.nt.")) << m.config_name;
    if (m.outcome == ktune::Outcome::kIncorrect) {
      ++incorrect;
      EXPECT_FALSE(m.reason.empty());
    }
    if (m.outcome == ktune::Outcome::kOk) fastest = std::min(fastest, m.stats->median_us);
    EXPECT_NE(m.outcome, ktune::Outcome::kSkipped) << m.reason;
  }
  EXPECT_EQ(incorrect, s.summary.outcomes.count("incorrect") ? s.summary.outcomes.at("incorrect") : 0u);
  ASSERT_TRUE(s.summary.winner.has_value());
  ASSERT_FALSE(s.retimed.empty());
  // The winner's re-timed median is within the tie window of the fastest (the fake slows every
  // re-time by 0.1 % alike), and it is the stored best.
  EXPECT_LE(s.summary.winner_median_us, fastest * 1.001 * (1 + options(1).tie_noise) + 1e-9);
  const auto best =
      db.best({kGpu.name, "gemm", "m=16,n=512,k=1024", DType::kBF16, std::nullopt, "nt"}, false);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->config_name, *s.summary.winner);
  EXPECT_EQ(test::fake_incorrect(best->config_name), false);
}

// A slow compile (a prebuilt cubin its compiler is still making) does not hold the GPU: the loop
// measures the candidates behind it that are compiled. The first compile blocks until three
// candidates were measured; a loop that waited on it in order would measure nothing meanwhile.
TEST(TuningLoop, ASlowCompileDoesNotHoldTheGpuWhileLaterCandidatesAreCompiled) {
  test::TempDir dir;
  std::mutex mu;
  std::condition_variable cv;
  int measured = 0;
  bool released_by_measurements = false;
  std::atomic<int> calls{0};
  const auto fast = test::fake_compile();
  const auto compile = [&](const harness::CompileRequest& r) {
    if (calls++ == 0) {
      std::unique_lock lock(mu);
      released_by_measurements = cv.wait_for(lock, std::chrono::seconds(20), [&] { return measured >= 3; });
    }
    return fast(r);
  };
  FakeMeasurer measurer;
  measurer.before_measure = [&](int) {
    std::lock_guard lock(mu);
    ++measured;
    cv.notify_all();
  };
  auto db = cache::ConfigCache::open(dir / "k.db");
  static const auto sources = kernel_templates::SourceLibrary::builtin();
  KeySummary summary;
  {
    TuningLoop loop(db, kGpu, cache::RunInfo{}, options(12), LoopDeps{compile, &measurer, &sources, nullptr});
    summary = loop.tune(gemm_space(), key(16, 512, 1024));
  }
  ASSERT_TRUE(summary.error.empty()) << summary.error;
  EXPECT_TRUE(released_by_measurements);
  EXPECT_EQ(summary.evaluations, 12u);
  // every candidate measured once, the slow one among them
  const std::set<std::string> names(measurer.measured.begin(), measurer.measured.end());
  EXPECT_EQ(names.size(), measurer.measured.size());
  EXPECT_EQ(names.size(), 12u);
}

/// Whether a gemm config name says SPLIT_K 1 (".sk1" at the end or before the next field; not ".sk16").
bool unsplit(const std::string& name) {
  return name.ends_with(".sk1") || name.find(".sk1.") != std::string::npos;
}
/// The cluster template splits K inside one launch (its blocks reduce through shared memory).
bool split_in_one_launch(const std::string& name) { return name.find(".mma_cluster.") != std::string::npos; }

Sweep run_sweep_with(const std::filesystem::path& db_path, const TuneKey& k, const TuneOptions& o,
                     FakeMeasurer& measurer) {
  auto db = cache::ConfigCache::open(db_path);
  static const auto sources = kernel_templates::SourceLibrary::builtin();
  LoopDeps deps{test::fake_compile(), &measurer, &sources, nullptr};
  Sweep out;
  {
    TuningLoop loop(db, kGpu, cache::RunInfo{}, o, deps);
    out.summary = loop.tune(gemm_space(), k);
  }
  out.measured = measurer.measured;
  out.retimed = measurer.retimed;
  return out;
}

// Split-K configs (tiled, gemv, mma; deterministic and atomic) are measured like any other: the
// request carries the plan's whole launch sequence. mma_cluster's split is one launch.
TEST(TuningLoop, SplitKConfigsAreMeasuredAsWholeLaunchSequences) {
  test::TempDir dir;
  const TuneKey k = key(2, 32, 512);  // ~600 configs, split-K ones of every template; a fast test
  const size_t everything = planned_evaluations(gemm_space(), k, options(0));
  TuneOptions compile_only = options(0);
  compile_only.compile_only = true;
  EXPECT_EQ(everything, planned_evaluations(gemm_space(), k, compile_only));  // nothing left out

  FakeMeasurer measurer;
  const Sweep s = run_sweep_with(dir / "sk.db", k, options(0), measurer);
  ASSERT_TRUE(s.summary.error.empty()) << s.summary.error;
  EXPECT_EQ(s.summary.unmeasurable, 0u);
  EXPECT_EQ(s.summary.candidates, everything);
  EXPECT_EQ(s.summary.measured, everything);
  std::map<std::string, size_t> split_by_template;  // "tiled", "gemv", "mma.a0", "mma.a1", "mma_cluster"
  for (const auto& [name, launches] : measurer.launches_of) {
    if (unsplit(name)) {
      EXPECT_EQ(launches, 1u) << name;
      continue;
    }
    if (split_in_one_launch(name)) {
      ++split_by_template["mma_cluster"];
      EXPECT_EQ(launches, 1u) << name;
      continue;
    }
    std::string t = name.find(".gemv.") != std::string::npos  ? "gemv"
                    : name.find(".mma.") != std::string::npos ? "mma"
                                                              : "tiled";
    if (t == "mma") t += name.find(".a1.") != std::string::npos ? ".a1" : ".a0";
    ++split_by_template[t];
    // GEMM + reduction; the atomic variant zeroes its workspace first.
    EXPECT_EQ(launches, t == "mma.a1" ? 3u : 2u) << name;
  }
  for (const char* t : {"tiled", "gemv", "mma.a0", "mma.a1", "mma_cluster"})
    EXPECT_GT(split_by_template[t], 0u) << t;

  auto db = cache::ConfigCache::open(dir / "sk.db");
  for (const auto& r : test::all_measurements(db)) {
    if (unsplit(r.m.config_name) || split_in_one_launch(r.m.config_name)) continue;
    EXPECT_GE(nlohmann::json::parse(r.m.resources_json).at("launches").get<int>(), 2) << r.m.config_name;
  }
}

TEST(TuningLoop, ALaunchLimitStillLeavesLongerPlansOut) {
  test::TempDir dir;
  TuneOptions o = options(0);
  o.max_launches = 1;
  FakeMeasurer measurer;
  const Sweep s = run_sweep_with(dir / "one.db", key(2, 32, 512), o, measurer);
  ASSERT_TRUE(s.summary.error.empty()) << s.summary.error;
  EXPECT_GT(s.summary.unmeasurable, 0u);
  EXPECT_EQ(s.summary.measured + s.summary.unmeasurable,
            planned_evaluations(gemm_space(), key(2, 32, 512), options(0)));
  for (const auto& [name, launches] : measurer.launches_of) EXPECT_EQ(launches, 1u) << name;
}

TEST(TuningLoop, KilledSweepResumesWithoutMeasuringTwice) {
  test::TempDir dir;
  const auto db_path = dir / "kill.db";
  const TuneKey k = key(16, 4096, 4096);
  const TuneOptions o = options(40, "random");
  constexpr int kKillAt = 9;  // the 10th measurement never returns

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    run_sweep(db_path, k, o, [](int calls) {
      if (calls == kKillAt) ::raise(SIGKILL);
    });
    _exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child should have been killed";
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  std::set<std::string> stored_measured;  // configs measured on the GPU before the kill
  {
    auto db = cache::ConfigCache::open(db_path);
    for (const auto& r : test::all_measurements(db)) {
      if (r.m.outcome != ktune::Outcome::kSkipped) stored_measured.insert(r.m.config_name);
    }
  }
  // Every measurement that returned before the kill was committed (one transaction a result).
  EXPECT_EQ(stored_measured.size(), static_cast<size_t>(kKillAt));

  const Sweep resumed = run_sweep(db_path, k, o);
  ASSERT_TRUE(resumed.summary.error.empty()) << resumed.summary.error;
  for (const auto& name : resumed.measured) {
    EXPECT_EQ(stored_measured.count(name), 0u) << name << " was measured again after the restart";
  }
  EXPECT_EQ(resumed.summary.from_cache, stored_measured.size());
  EXPECT_EQ(resumed.summary.evaluations, 40u);

  // Nothing lost, nothing twice: one candidate row per measured config over both runs, and the
  // two runs together evaluated exactly what one uninterrupted sweep evaluates.
  const Sweep fresh = run_sweep(dir / "fresh.db", k, o);
  auto db = cache::ConfigCache::open(db_path);
  std::multiset<std::string> measured_rows;
  for (const auto& r : test::all_measurements(db)) {
    if (r.m.outcome != ktune::Outcome::kSkipped) measured_rows.insert(r.m.config_name);
  }
  std::multiset<std::string> expected(fresh.measured.begin(), fresh.measured.end());
  for (const auto& name : resumed.retimed) expected.insert(name);  // the resumed run's re-time rows
  EXPECT_EQ(measured_rows, expected);
  EXPECT_EQ(resumed.summary.winner, fresh.summary.winner);
}

TEST(TuningLoop, ExceptionMidSweepLosesNothingAndAFinishedKeyIsNotMeasuredAgain) {
  test::TempDir dir;
  const auto db_path = dir / "throw.db";
  const TuneKey k = key(1, 4096, 4096);
  const TuneOptions o = options(24, "model");
  EXPECT_THROW(run_sweep(db_path, k, o,
                         [](int calls) {
                           if (calls == 5) throw std::runtime_error("worker machine lost");
                         }),
               std::runtime_error);
  const Sweep second = run_sweep(db_path, k, o);
  EXPECT_EQ(second.summary.from_cache, 5u);
  ASSERT_TRUE(second.summary.winner.has_value()) << second.summary.error;

  // A third sweep of the same key: everything comes from the cache, the stored winner stands.
  const Sweep third = run_sweep(db_path, k, o);
  EXPECT_TRUE(third.measured.empty());
  EXPECT_TRUE(third.retimed.empty());
  EXPECT_TRUE(third.summary.winner_kept);
  EXPECT_EQ(third.summary.winner, second.summary.winner);

  // --retune measures again.
  TuneOptions retune = o;
  retune.retune = true;
  const Sweep fourth = run_sweep(db_path, k, retune);
  EXPECT_EQ(fourth.summary.from_cache, 0u);
  EXPECT_FALSE(fourth.measured.empty());
}

TEST(TuningLoop, CompileOnlyRecordsResourcesCompileErrorsAndLimits) {
  test::TempDir dir;
  auto db = cache::ConfigCache::open(dir / "co.db");
  const auto sources = kernel_templates::SourceLibrary::builtin();
  TuneOptions o = options(60, "random");
  o.compile_only = true;
  // 200 registers a thread: a block of 384 threads or more needs more than 64 Ki registers.
  // Template arguments starting "<128," (BLOCK_M = 128 tiles) fail to compile.
  LoopDeps deps{test::fake_compile(200, "<128,"), nullptr, &sources, nullptr};
  KeySummary s;
  {
    TuningLoop loop(db, kGpu, cache::RunInfo{}, o, deps);
    s = loop.tune(gemm_space(), key(300, 700, 1000));
  }
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_FALSE(s.winner.has_value());
  std::map<ktune::Outcome, int> counts;
  for (const auto& r : test::all_measurements(db)) {
    ++counts[r.m.outcome];
    const auto res = nlohmann::json::parse(r.m.resources_json);
    if (r.m.outcome == ktune::Outcome::kSkipped) {
      EXPECT_EQ(r.m.reason, "compile-only");
      EXPECT_EQ(res.at("registers"), 200);
      EXPECT_GT(res.at("threads_per_block").get<int>(), 0);
      EXPECT_LT(res.at("threads_per_block").get<int>(), 384);
    }
    if (r.m.outcome == ktune::Outcome::kExceedsLimits) {
      EXPECT_NE(r.m.reason.find("registers"), std::string::npos) << r.m.reason;
      EXPECT_GE(res.at("threads_per_block").get<int>(), 384);
    }
    if (r.m.outcome == ktune::Outcome::kCompileError) {
      EXPECT_NE(r.m.config_name.find(".128x"), std::string::npos) << r.m.config_name;
      EXPECT_NE(r.m.reason.find("error: something"), std::string::npos) << r.m.reason;
    }
  }
  EXPECT_EQ(counts[ktune::Outcome::kSkipped] + counts[ktune::Outcome::kExceedsLimits] +
                counts[ktune::Outcome::kCompileError],
            60);
  EXPECT_GT(counts[ktune::Outcome::kSkipped], 0);
  EXPECT_GT(counts[ktune::Outcome::kExceedsLimits], 0);
  EXPECT_GT(counts[ktune::Outcome::kCompileError], 0);
}

TEST(TuningLoop, EmptySpaceIsAKeyErrorNotACrash) {
  test::TempDir dir;
  TuneOptions o = options(10);
  o.limits.max_threads_per_block = 16;  // below one warp: every template's threads_fit fails
  const Sweep s = run_sweep(dir / "e.db", key(16, 512, 512), o);
  EXPECT_FALSE(s.summary.error.empty());
  EXPECT_NE(s.summary.error.find("threads_fit"), std::string::npos) << s.summary.error;
  EXPECT_TRUE(s.measured.empty());
}

}  // namespace
}  // namespace ktune::tuner
