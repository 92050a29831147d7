// The flush plan (measure/flush_plan.hpp): how many buffer sets rotation takes, and the fall back
// to an L2 flush, said in the plan, when they do not fit in free memory.
#include "measure/flush_plan.hpp"

#include <gtest/gtest.h>

#include "ktune/error.hpp"

namespace ktune::measure {
namespace {

constexpr int64_t kL2 = 60LL << 20;  // an H200's 60 MiB
constexpr uint64_t kFree = 100ULL << 30;

TEST(FlushPlan, RotationIsTheDefaultAndCoversTwiceTheL2) {
  const TimingOptions t;
  EXPECT_EQ(t.flush, FlushMode::kRotate);
  // 8 MiB a set: ceil(2 * 60 / 8) + 1 = 16 sets, 128 MiB in all, more than twice the L2.
  const FlushPlan p = plan_flush(t, kL2, 8ULL << 20, kFree);
  EXPECT_EQ(p.mode, FlushMode::kRotate);
  EXPECT_EQ(p.sets, 16);
  EXPECT_GT(static_cast<double>(p.sets) * (8 << 20), 2.0 * kL2);
  EXPECT_EQ(p.note, "");
  EXPECT_EQ(p.describe(), "rotate");
}

TEST(FlushPlan, SetsAreBetweenTwoAndTheCap) {
  TimingOptions t;
  EXPECT_EQ(plan_flush(t, kL2, 4ULL << 30, kFree).sets, 2);  // a set larger than the L2: two
  EXPECT_EQ(plan_flush(t, kL2, 1024, kFree).sets, t.rotate_max_sets);
  t.rotate_max_sets = 5;
  EXPECT_EQ(plan_flush(t, kL2, 1024, kFree).sets, 5);
}

TEST(FlushPlan, RotationThatDoesNotFitFallsBackToAnL2FlushAndSaysSo) {
  const TimingOptions t;
  // Two sets of 30 GB need 30 GB more, with 20 GB free.
  const FlushPlan p = plan_flush(t, kL2, 30'000'000'000ULL, 20'000'000'000ULL);
  EXPECT_EQ(p.mode, FlushMode::kL2);
  EXPECT_EQ(p.sets, 1);
  EXPECT_NE(p.note.find("30000.0 MB"), std::string::npos) << p.note;
  EXPECT_NE(p.note.find("20.0 GB free"), std::string::npos) << p.note;
  EXPECT_EQ(p.describe().rfind("l2 (rotation needs 1 more buffer sets", 0), 0u) << p.describe();
}

TEST(FlushPlan, OtherModesUseOneSet) {
  for (FlushMode m : {FlushMode::kL2, FlushMode::kL2Clean, FlushMode::kNone}) {
    TimingOptions t;
    t.flush = m;
    const FlushPlan p = plan_flush(t, kL2, 1024, kFree);
    EXPECT_EQ(p.mode, m);
    EXPECT_EQ(p.sets, 1);
    EXPECT_EQ(flush_mode_from_string(to_string(m)), m);
  }
  EXPECT_THROW(flush_mode_from_string("dirty"), Error);
}

}  // namespace
}  // namespace ktune::measure
