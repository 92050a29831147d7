// The stopping rule on synthetic sample streams: steady, noisy, drifting, bimodal, and the caps.
#include "measure/stopping_rule.hpp"

#include <cmath>
#include <functional>
#include <random>

#include <gtest/gtest.h>

#include "ktune/error.hpp"

namespace ktune::measure {
namespace {

struct RunOutcome {
  StopReason reason = StopReason::kContinue;
  std::size_t samples = 0;
  SampleStats stats;
  double drift = 0;
};

// Feeds `next(i)` until the rule stops; each sample "costs" `ms_per_sample` of elapsed time.
RunOutcome run(const TimingOptions& opt, const std::function<double(int)>& next,
               double ms_per_sample = 0.01) {
  StoppingRule rule(opt);
  RunOutcome out;
  for (int i = 0;; ++i) {
    rule.add(next(i));
    out.reason = rule.check(ms_per_sample * (i + 1));
    if (out.reason != StopReason::kContinue) break;
    if (i > 1000000) ADD_FAILURE() << "rule never stopped";
  }
  out.samples = rule.size();
  out.stats = rule.stats();
  out.drift = rule.drift();
  return out;
}

TimingOptions options() {
  TimingOptions o;
  o.min_samples = 10;
  o.max_samples = 3000;
  o.max_time_ms = 1e9;
  return o;
}

TEST(StoppingRule, SteadyStreamConvergesQuickly) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0, 0.1);  // 0.1 % of 100 us
  const RunOutcome r = run(options(), [&](int) { return 100 + noise(rng); });
  EXPECT_EQ(r.reason, StopReason::kConverged);
  EXPECT_LE(r.samples, 20U);
  EXPECT_NEAR(r.stats.median, 100, 0.2);
  EXPECT_LE(r.stats.rse_median, 0.005);
}

TEST(StoppingRule, NoisyStreamNeedsMoreSamplesAndStillFindsTheMedian) {
  std::mt19937_64 rng(2);
  std::normal_distribution<double> noise(0,
                                         5.0);  // 5 %: SE(median) = 1.2533*5/sqrt(n) <= 0.5 needs n >= ~157
  const RunOutcome r = run(options(), [&](int) { return 100 + noise(rng); });
  EXPECT_EQ(r.reason, StopReason::kConverged);
  EXPECT_GE(r.samples, 80U);
  EXPECT_LT(r.samples, 3000U);
  EXPECT_NEAR(r.stats.median, 100, 1.5);  // 3 standard errors of 0.5
}

TEST(StoppingRule, DriftingStreamIsNotCalledConverged) {
  // 0.5 % slower every sample (a clock falling fast): the median interval is tight at first glance
  // but the halves disagree; sampling goes to the cap and the drift is reported.
  TimingOptions o = options();
  o.max_samples = 300;
  const RunOutcome r = run(o, [&](int i) { return 100 * (1 + 0.005 * i); });
  EXPECT_EQ(r.reason, StopReason::kSampleCap);
  EXPECT_GT(r.drift, 0.02);
}

TEST(StoppingRule, StepDriftDetectedOnceTheStepIsInside) {
  // Clocks drop after 5 samples: 100 -> 104. The halves disagree until samples at 104 dominate both.
  StoppingRule rule(options());
  for (int i = 0; i < 12; ++i) rule.add(i < 5 ? 100.0 : 104.0);
  EXPECT_GT(rule.drift(), 0.02);
  EXPECT_NE(rule.check(1), StopReason::kConverged);
}

TEST(StoppingRule, BimodalEvenSplitNeverConverges) {
  // Alternating 100/110: the median sits between the modes and its interval spans both.
  TimingOptions o = options();
  o.max_samples = 500;
  const RunOutcome r = run(o, [&](int i) { return i % 2 ? 110.0 : 100.0; });
  EXPECT_EQ(r.reason, StopReason::kSampleCap);
  EXPECT_GT(r.stats.rse_median, o.rse_target);
}

TEST(StoppingRule, BimodalWithMinoritySlowModeConvergesOnTheFastMode) {
  std::mt19937_64 rng(3);
  std::bernoulli_distribution slow(0.3);
  std::normal_distribution<double> noise(0, 0.1);
  const RunOutcome r = run(options(), [&](int) { return (slow(rng) ? 130.0 : 100.0) + noise(rng); });
  EXPECT_EQ(r.reason, StopReason::kConverged);
  EXPECT_NEAR(r.stats.median, 100, 0.5);
  EXPECT_GT(r.stats.mean, 103);  // the mean is pulled up by the slow mode; the median is not
}

TEST(StoppingRule, TimeCapStopsANoisyStream) {
  TimingOptions o = options();
  o.max_time_ms = 50;
  std::mt19937_64 rng(4);
  std::normal_distribution<double> noise(0, 20.0);
  const RunOutcome r = run(
      o, [&](int) { return 100 + noise(rng); }, 1.0);
  EXPECT_EQ(r.reason, StopReason::kTimeCap);
  EXPECT_EQ(r.samples, 50U);
}

TEST(StoppingRule, SampleCapStopsAtExactlyMaxSamples) {
  TimingOptions o = options();
  o.max_samples = 40;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0, 30.0);
  const RunOutcome r = run(o, [&](int) { return 100 + noise(rng); });
  EXPECT_EQ(r.reason, StopReason::kSampleCap);
  EXPECT_EQ(r.samples, 40U);
}

TEST(StoppingRule, NeverConvergesBeforeMinSamples) {
  TimingOptions o = options();
  o.min_samples = 25;
  const RunOutcome r = run(o, [&](int) { return 50.0; });
  EXPECT_EQ(r.reason, StopReason::kConverged);
  EXPECT_EQ(r.samples, 25U);
}

TEST(TimingOptions, ValidateRejectsOutOfRange) {
  TimingOptions o;
  EXPECT_NO_THROW(o.validate());
  o.rse_target = 0;
  EXPECT_THROW(o.validate(), Error);
  o = TimingOptions{};
  o.max_samples = 2;
  EXPECT_THROW(o.validate(), Error);
  EXPECT_EQ(flush_mode_from_string("rotate"), FlushMode::kRotate);
  EXPECT_THROW(flush_mode_from_string("flush"), Error);
}

}  // namespace
}  // namespace ktune::measure
