// The compiled resources of a config and the occupancy they allow, against figures worked by hand
// from CUDA's occupancy rules (registers a warp in units of 256, 1 KiB of shared memory reserved a
// block, sm_90: 64 Ki registers, 228 KiB, 2048 threads and 32 blocks an SM).

#include "reports/resource_table.hpp"

#include <gtest/gtest.h>

#include <random>

#include <nlohmann/json.hpp>

namespace ktune::reports {
namespace {

CompiledResources resources(int64_t registers, int64_t threads, int64_t shared) {
  CompiledResources r;
  r.registers = registers;
  r.threads_per_block = threads;
  r.shared_bytes = shared;
  set_occupancy(r, sm_limits("sm_90"));
  return r;
}

TEST(ResourceTable, OccupancyMatchesFiguresWorkedByHand) {
  // 128 threads x 64 registers: 8 Ki registers a block, 8 blocks (threads would allow 16).
  auto r = resources(64, 128, 0);
  EXPECT_EQ(r.blocks_per_sm, 8);
  EXPECT_EQ(r.limited_by, "registers");
  // 256 threads x 32 registers and 48 KiB: 228 KiB / 49 KiB = 4 blocks (registers allow 8).
  r = resources(32, 256, 48 * 1024);
  EXPECT_EQ(r.blocks_per_sm, 4);
  EXPECT_EQ(r.limited_by, "shared memory");
  // 1024 threads x 16 registers: 2 blocks by threads (registers allow 4).
  r = resources(16, 1024, 0);
  EXPECT_EQ(r.blocks_per_sm, 2);
  EXPECT_EQ(r.limited_by, "threads");
  // 32 threads x 16 registers: the 32-block limit.
  r = resources(16, 32, 0);
  EXPECT_EQ(r.blocks_per_sm, 32);
  EXPECT_EQ(r.limited_by, "blocks");
  // 33 registers round up to 40 a thread (1280 a warp): 65536 / (1280 x 4 warps) = 12 blocks.
  r = resources(33, 128, 0);
  EXPECT_EQ(r.blocks_per_sm, 12);
  // sm_89: 100 KiB and 1536 threads an SM.
  CompiledResources ada = resources(32, 256, 32 * 1024);
  set_occupancy(ada, sm_limits("sm_89"));
  EXPECT_EQ(ada.blocks_per_sm, 3);  // 100 KiB / 33 KiB
  EXPECT_EQ(ada.limited_by, "shared memory");
}

TEST(ResourceTable, ReadsTheWorkersFiguresBeforeTheCompilersAndNothingWithoutRegisters) {
  std::mt19937 rng(std::random_device{}());
  const auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int regs = uniform(16, 255), threads = 32 * uniform(1, 32), smem = uniform(0, 100000),
            dyn = uniform(0, 100000), spill_st = uniform(0, 64), spill_ld = uniform(0, 64);
  ReportRow row;
  row.stored.m.resources_json = nlohmann::json{
      {"registers", regs},
      {"threads_per_block", threads},
      {"static_smem_bytes", smem},
      {"dynamic_smem_bytes", dyn},
      {"spill_store_bytes", spill_st},
      {"spill_load_bytes", spill_ld},
      {"arch", "sm_90"}}.dump();
  auto r = compiled_resources(row);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->registers, regs);
  EXPECT_EQ(r->threads_per_block, threads);
  EXPECT_EQ(r->shared_bytes, smem + dyn);
  EXPECT_EQ(r->spill_bytes, spill_st + spill_ld);
  EXPECT_EQ(r->arch, "sm_90");
  ASSERT_TRUE(r->blocks_per_sm);

  // Measured rows carry the worker's own reading under worker_*: it wins.
  auto j = nlohmann::json::parse(row.stored.m.resources_json);
  j["worker_registers"] = regs + 1;
  j["worker_threads_per_block"] = 64;
  j["worker_static_shared_bytes"] = 100;
  j["worker_dynamic_shared_bytes"] = 28;
  row.stored.m.resources_json = j.dump();
  r = compiled_resources(row);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->registers, regs + 1);
  EXPECT_EQ(r->threads_per_block, 64);
  EXPECT_EQ(r->shared_bytes, 128);

  row.stored.m.resources_json = R"({"library":"cublaslt"})";
  EXPECT_FALSE(compiled_resources(row));
  row.stored.m.resources_json = "{}";
  EXPECT_FALSE(compiled_resources(row));
}

TEST(ResourceTable, CellsForPeople) {
  EXPECT_EQ(bytes_text(0), "0 B");
  EXPECT_EQ(bytes_text(1023), "1023 B");
  EXPECT_EQ(bytes_text(49152), "48.0 KiB");
  EXPECT_EQ(occupancy_text(resources(64, 128, 0)), "8 (registers)");
  EXPECT_EQ(occupancy_text(CompiledResources{}), "–");
}

}  // namespace
}  // namespace ktune::reports
