// The tuning loop after a stop request (LoopDeps::stop; `ktune tune` sets it on SIGINT/SIGTERM), with
// the fake compiler and measurer: nothing new is proposed, the candidate being measured is stored,
// one cut short (interrupted) is not, no winner is named from part of a key, and a later run resumes
// the key measuring only what is missing.

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>

#include "kernel_templates/embedded_sources.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/loop/tuning_loop.hpp"

namespace ktune::tuner {
namespace loop_stop_test {  // named: the unity build batches this file with others

const cache::GpuInfo kGpu{"Fake GPU", 9, 0, 132, int64_t{141} << 30, "{}"};
constexpr size_t kBudget = 24;

ConfigSpace gemm_space() { return ConfigSpace::load(configs_dir() / "spaces" / "gemm.toml"); }

TuneKey key() {
  return {"gemm", NamedShape{"test", {{"m", 16}, {"n", 1024}, {"k", 2048}}}, DType::kBF16, "nt"};
}

TuneOptions options() {
  TuneOptions o;
  o.strategy = "exhaustive";
  o.budget = kBudget;
  o.compile_threads = 2;
  o.counters = false;
  return o;
}

/// The fake measurer, but a stop request set during measure() call `interrupt_at` comes back
/// interrupted (as measure::CandidateRunner returns a candidate cut short after its grace).
class StoppingMeasurer : public test::FakeMeasurer {
 public:
  std::atomic<bool>* stop = nullptr;
  int stop_at = -1;             ///< call (0-based) during which the stop arrives
  bool interrupt = false;       ///< that call is cut short
  bool stop_in_retime = false;  ///< the stop arrives during the re-time, which is cut short

  measure::CandidateResult measure(const measure::CandidateRequest& request) override {
    const int n = calls();
    measure::CandidateResult r = FakeMeasurer::measure(request);
    if (n == stop_at) {
      stop->store(true);
      if (interrupt) {
        interrupted.insert(request.name);
        r.interrupted = true;
        r.outcome = Outcome::kSkipped;
        r.reason = "interrupted";
      }
    }
    return r;
  }
  std::vector<measure::CandidateResult> retime(std::vector<measure::CandidateRequest> requests,
                                               int rounds) override {
    auto out = FakeMeasurer::retime(std::move(requests), rounds);
    if (stop_in_retime) {
      stop->store(true);
      out.back().interrupted = true;
    }
    return out;
  }
  std::set<std::string> interrupted;
};

KeySummary tune(const std::filesystem::path& db_path, CandidateMeasurer& measurer,
                const std::atomic<bool>* stop) {
  auto db = cache::ConfigCache::open(db_path);
  static const auto sources = kernel_templates::SourceLibrary::builtin();
  LoopDeps deps{test::fake_compile(), &measurer, &sources, nullptr, nullptr, stop};
  TuningLoop loop(db, kGpu, cache::RunInfo{}, options(), deps);
  return loop.tune(gemm_space(), key());
}

std::map<std::string, int> rows_by_name(const std::filesystem::path& db_path) {
  auto db = cache::ConfigCache::open(db_path);
  std::map<std::string, int> rows;
  for (const auto& m : test::all_measurements(db)) ++rows[m.m.config_name];
  return rows;
}

bool has_best(const std::filesystem::path& db_path) {
  auto db = cache::ConfigCache::open(db_path);
  return !db.list_best().empty();
}

/// Resumes without a stop: the key completes, measuring only what the stopped run did not store.
void expect_resume_measures_only_the_rest(const std::filesystem::path& db_path,
                                          const std::map<std::string, int>& before) {
  test::FakeMeasurer again;
  const KeySummary s = tune(db_path, again, nullptr);
  EXPECT_FALSE(s.stopped);
  ASSERT_TRUE(s.winner.has_value()) << s.error;
  EXPECT_EQ(s.evaluations, kBudget);
  EXPECT_EQ(s.from_cache, before.size());
  EXPECT_EQ(again.measured.size(), kBudget - before.size());
  for (const auto& name : again.measured) EXPECT_FALSE(before.contains(name)) << name << " measured twice";
  EXPECT_TRUE(has_best(db_path));
}

TEST(LoopStop, TheRunningCandidateIsStoredNothingNewIsProposedAndNoWinnerIsNamed) {
  test::TempDir dir;
  std::atomic<bool> stop{false};
  StoppingMeasurer m;
  m.stop = &stop;
  m.stop_at = 5;  // the stop arrives while the sixth candidate is measured
  const KeySummary s = tune(dir / "k.db", m, &stop);
  EXPECT_TRUE(s.stopped);
  EXPECT_TRUE(s.error.empty()) << s.error;
  EXPECT_FALSE(s.winner.has_value());
  EXPECT_EQ(m.measured.size(), 6u) << "nothing measured after the stop";
  EXPECT_TRUE(m.retimed.empty()) << "no re-time of part of a key";
  const auto rows = rows_by_name(dir / "k.db");
  EXPECT_EQ(rows.size(), 6u);
  for (const auto& name : m.measured) EXPECT_EQ(rows.count(name), 1u) << name;
  EXPECT_EQ(s.evaluations, 6u);
  EXPECT_FALSE(has_best(dir / "k.db"));
  expect_resume_measures_only_the_rest(dir / "k.db", rows);
}

TEST(LoopStop, ACandidateCutShortIsNotStoredAndIsMeasuredOnResume) {
  test::TempDir dir;
  std::atomic<bool> stop{false};
  StoppingMeasurer m;
  m.stop = &stop;
  m.stop_at = 3;
  m.interrupt = true;
  const KeySummary s = tune(dir / "k.db", m, &stop);
  EXPECT_TRUE(s.stopped);
  ASSERT_EQ(m.interrupted.size(), 1u);
  const std::string cut = *m.interrupted.begin();
  const auto rows = rows_by_name(dir / "k.db");
  EXPECT_EQ(rows.size(), 3u);
  EXPECT_FALSE(rows.contains(cut)) << "an interrupted candidate says nothing about its config";
  test::FakeMeasurer again;
  tune(dir / "k.db", again, nullptr);
  EXPECT_NE(std::find(again.measured.begin(), again.measured.end(), cut), again.measured.end());
}

TEST(LoopStop, AStopDuringTheRetimeNamesNoWinnerAndTheResumeDoes) {
  test::TempDir dir;
  std::atomic<bool> stop{false};
  StoppingMeasurer m;
  m.stop = &stop;
  m.stop_in_retime = true;
  const KeySummary s = tune(dir / "k.db", m, &stop);
  EXPECT_TRUE(s.stopped);
  EXPECT_FALSE(s.winner.has_value());
  EXPECT_FALSE(m.retimed.empty());
  const auto rows = rows_by_name(dir / "k.db");
  EXPECT_EQ(rows.size(), kBudget) << "every evaluation stored, no re-time row";
  EXPECT_FALSE(has_best(dir / "k.db"));
  test::FakeMeasurer again;
  const KeySummary resumed = tune(dir / "k.db", again, nullptr);
  EXPECT_TRUE(again.measured.empty());
  EXPECT_FALSE(again.retimed.empty());
  EXPECT_TRUE(resumed.winner.has_value()) << resumed.error;
  EXPECT_TRUE(has_best(dir / "k.db"));
}

TEST(LoopStop, AStopBeforeTheKeyMeasuresNothing) {
  test::TempDir dir;
  std::atomic<bool> stop{true};
  test::FakeMeasurer m;
  const KeySummary s = tune(dir / "k.db", m, &stop);
  EXPECT_TRUE(s.stopped);
  EXPECT_TRUE(m.measured.empty());
  EXPECT_TRUE(rows_by_name(dir / "k.db").empty());
}

}  // namespace loop_stop_test
}  // namespace ktune::tuner
