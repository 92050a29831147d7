#include "tuner/space/resource_limits.hpp"

#include <gtest/gtest.h>

#include "tuner/space/device_limits.hpp"

namespace ktune::tuner {
namespace {

Resources res(int64_t regs, int64_t threads, int64_t smem_static, int64_t smem_dynamic) {
  Resources r;
  r.registers_per_thread = regs;
  r.threads_per_block = threads;
  r.static_smem_bytes = smem_static;
  r.dynamic_smem_bytes = smem_dynamic;
  return r;
}

TEST(ResourceLimits, RegistersAreAllocatedPerWarpIn256s) {
  const DeviceLimits h200;
  // 37 registers * 32 lanes = 1184 -> 1280 per warp; 3 warps (65..96 threads -> 3 warps).
  EXPECT_EQ(registers_per_block(res(37, 70, 0, 0), h200), 3 * 1280);
  EXPECT_EQ(registers_per_block(res(64, 256, 0, 0), h200), 8 * 2048);
}

TEST(ResourceLimits, WithinLimitsPasses) {
  EXPECT_EQ(exceeds_limits(res(128, 512, 1000, 100000), DeviceLimits{}), std::nullopt);
}

TEST(ResourceLimits, EachLimitGivesItsReason) {
  const DeviceLimits h200;
  const auto regs = exceeds_limits(res(168, 512, 0, 0), h200);  // 168*32=5376 per warp * 16 warps = 86016
  ASSERT_TRUE(regs.has_value());
  EXPECT_NE(regs->find("86016"), std::string::npos) << *regs;
  EXPECT_NE(regs->find("65536"), std::string::npos) << *regs;

  const auto smem = exceeds_limits(res(32, 128, 4096, 230000), h200);
  ASSERT_TRUE(smem.has_value());
  EXPECT_NE(smem->find("234096"), std::string::npos) << *smem;

  const auto threads = exceeds_limits(res(16, 2048, 0, 0), h200);
  ASSERT_TRUE(threads.has_value());
  EXPECT_NE(threads->find("2048"), std::string::npos) << *threads;

  Resources fn = res(100, 768, 0, 0);
  fn.max_threads_for_function = 640;
  const auto fn_limit = exceeds_limits(fn, h200);
  ASSERT_TRUE(fn_limit.has_value());
  EXPECT_NE(fn_limit->find("640"), std::string::npos) << *fn_limit;

  EXPECT_TRUE(exceeds_limits(res(300, 32, 0, 0), h200).has_value());
}

TEST(ResourceLimits, TieBreakPrefersFewerResourcesThenName) {
  const DeviceLimits h200;
  std::vector<Contender> c = {
      {"gemm.bf16.nt.b", 10.05, res(64, 256, 0, 16384)},
      {"gemm.bf16.nt.a", 10.00, res(128, 256, 0, 32768)},  // fastest, but biggest
      {"gemm.bf16.nt.c", 10.05, res(64, 256, 0, 16384)},   // same footprint as b, later name
      {"gemm.bf16.nt.d", 11.00, res(16, 32, 0, 0)},        // smallest, but outside the noise
  };
  EXPECT_EQ(pick_winner(c, h200, 0.01), 0u);
  EXPECT_EQ(pick_winner(c, h200, 0.001), 1u);  // nobody else within 0.1 %
  EXPECT_EQ(pick_winner(c, h200, 0.2), 3u);
  // Order of the input does not matter.
  std::vector<Contender> reversed(c.rbegin(), c.rend());
  EXPECT_EQ(reversed[pick_winner(reversed, h200, 0.01)].name, "gemm.bf16.nt.b");
}

TEST(ResourceLimits, TiedLibraryAlgorithmsGoByTheHeuristicsRankBeforeTheName) {
  const DeviceLimits h200;
  const Resources none;  // a library call: no compiled function, no footprint
  std::vector<Contender> c = {
      {"gemm.bf16.nt.cublaslt.a66.t19", 10.00, none, 3},  // fastest by 0.5 %, fourth in the heuristic
      {"gemm.bf16.nt.cublaslt.a66.t23", 10.05, none, 0},  // the heuristic's first
      {"gemm.bf16.nt.cublaslt.a66.t20", 10.02, none, 1},
  };
  EXPECT_EQ(pick_winner(c, h200, 0.01), 1u);
  EXPECT_EQ(pick_winner(c, h200, 0.001), 0u);  // outside 0.1 % the fastest stands
  c[1].median_us = 10.5;                       // 5 % slower: no longer a tie
  EXPECT_EQ(pick_winner(c, h200, 0.01), 2u);
}

}  // namespace
}  // namespace ktune::tuner

namespace ktune::tuner {
namespace {

TEST(DeviceLimits, FromHarnessDeviceInfo) {
  harness::DeviceInfo d;
  d.smem_per_block_optin = 101376;  // an sm_86 card's opt-in limit
  d.max_threads_per_block = 1024;
  d.max_regs_per_block = 65536;
  d.sm_count = 84;
  d.warp_size = 32;
  const DeviceLimits l = device_limits(d);
  EXPECT_EQ(l.max_smem_per_block, 101376);
  EXPECT_EQ(l.sm_count, 84);
  EXPECT_EQ(l.max_regs_per_thread, 255);
  EXPECT_TRUE(exceeds_limits(Resources{32, 128, 0, 110000, 0, 0}, l).has_value());
  EXPECT_FALSE(exceeds_limits(Resources{32, 128, 0, 100000, 0, 0}, l).has_value());
}

}  // namespace
}  // namespace ktune::tuner
