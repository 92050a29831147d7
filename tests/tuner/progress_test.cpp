// The progress line: counts, rate, ETA and best; silent when disabled (output piped).

#include "tuner/loop/progress.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace ktune::tuner {
namespace {

TEST(Progress, LineShowsDoneTotalKeyAndBest) {
  std::ostringstream out;
  Progress p(out, true);
  p.begin(40);
  p.set_key("gemm m=16,n=4096,k=4096 bf16 nt");
  p.advance(10);
  p.set_best("gemm.bf16.nt.gemv.k256.sk4.w4.r2", 12.345);
  const std::string line = p.line();
  EXPECT_NE(line.find("[10/40] 25%"), std::string::npos) << line;
  EXPECT_NE(line.find("cfg/s"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA"), std::string::npos) << line;
  EXPECT_NE(line.find("m=16,n=4096,k=4096"), std::string::npos) << line;
  EXPECT_NE(line.find("best gemm.bf16.nt.gemv.k256.sk4.w4.r2 12.35 us"), std::string::npos) << line;
  p.message("a note");
  p.finish();
  EXPECT_NE(out.str().find("a note\n"), std::string::npos);
  EXPECT_NE(out.str().find('\r'), std::string::npos);
}

TEST(Progress, ShowsEachDeviceOnlyWithSeveral) {
  std::ostringstream out;
  Progress p(out, false);
  p.begin(8);
  p.device_status(0, true, 0);
  EXPECT_EQ(p.line().find("gpu0"), std::string::npos) << "one device needs no per-device status";
  p.device_status(2, false, 3);
  p.device_status(0, false, 4);
  p.device_status(2, true, 3);
  const std::string line = p.line();
  EXPECT_NE(line.find("| gpu0 4 gpu2 3*"), std::string::npos) << line;
}

TEST(Progress, DisabledWritesNothing) {
  std::ostringstream out;
  Progress p(out, false);
  p.begin(3);
  p.set_key("k");
  p.advance(3);
  p.message("hidden");
  p.finish();
  EXPECT_TRUE(out.str().empty());
  EXPECT_NE(p.line().find("[3/3] 100%"), std::string::npos);
}

}  // namespace
}  // namespace ktune::tuner
