// The ptxas report parser, on logs recorded from NVRTC 13.0 (-Xptxas=-v) for sm_80 and sm_90.

#include "harness/ptxas_report.hpp"

#include <gtest/gtest.h>

#include "harness/device_info.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

// NVRTC 13.0, -arch=sm_80 -Xptxas=-v -maxrregcount=16: two template instances and a kernel that spills.
constexpr const char* kSm80Log =
    R"(ptxas warning : For profile sm_80 adjusting per thread register count of 16 to lower bound of 24
ptxas info    : Overriding maximum register limit 256 for '_Z5scaleILi4EdEvPT0_PKS0_i' with  24 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for '_Z5scaleILi2EfEvPT0_PKS0_i' with  24 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for '_Z5spillPfii' with  24 of maxrregcount option
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z5scaleILi4EdEvPT0_PKS0_i' for 'sm_80'
ptxas info    : Function properties for _Z5scaleILi4EdEvPT0_PKS0_i
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem, 372 bytes cmem[0]
ptxas info    : Compile time = 2.302 ms
ptxas info    : Compiling entry function '_Z5scaleILi2EfEvPT0_PKS0_i' for 'sm_80'
ptxas info    : Function properties for _Z5scaleILi2EfEvPT0_PKS0_i
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 256 bytes smem, 372 bytes cmem[0]
ptxas info    : Compile time = 1.506 ms
ptxas info    : Compiling entry function '_Z5spillPfii' for 'sm_80'
ptxas info    : Function properties for _Z5spillPfii
ptxas         .     216 bytes stack frame, 248 bytes spill stores, 248 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 216 bytes cumulative stack size, 368 bytes cmem[0]
ptxas info    : Compile time = 15.583 ms
)";

// NVRTC 13.0, -arch=sm_90 -Xptxas=-v -maxrregcount=32 (sm_90 prints no cmem).
constexpr const char* kSm90Log = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z5scaleILi4EdEvPT0_PKS0_i' for 'sm_90'
ptxas info    : Function properties for _Z5scaleILi4EdEvPT0_PKS0_i
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 3.568 ms
ptxas info    : Compiling entry function '_Z5spillPfii' for 'sm_90'
ptxas info    : Function properties for _Z5spillPfii
ptxas         .     1024 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 1024 bytes cumulative stack size
ptxas info    : Compile time = 63.241 ms
)";

TEST(PtxasReport, Sm80LogGivesEveryKernel) {
  const auto r = parse_ptxas_report(kSm80Log);
  ASSERT_EQ(r.size(), 3u);
  const KernelResources& d = r.at("_Z5scaleILi4EdEvPT0_PKS0_i");
  EXPECT_EQ(d.registers, 12);
  EXPECT_EQ(d.shared_bytes, 1024);
  EXPECT_EQ(d.constant_bytes, 372);
  EXPECT_EQ(d.spill_store_bytes, 0);
  EXPECT_EQ(r.at("_Z5scaleILi2EfEvPT0_PKS0_i").shared_bytes, 256);
  const KernelResources& s = r.at("_Z5spillPfii");
  EXPECT_EQ(s.registers, 24);
  EXPECT_EQ(s.spill_store_bytes, 248);
  EXPECT_EQ(s.spill_load_bytes, 248);
  EXPECT_EQ(s.local_bytes, 216);
  EXPECT_EQ(s.shared_bytes, 0);
}

TEST(PtxasReport, Sm90LogWithoutCmem) {
  const auto r = parse_ptxas_report(kSm90Log);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r.at("_Z5scaleILi4EdEvPT0_PKS0_i").registers, 14);
  EXPECT_EQ(r.at("_Z5scaleILi4EdEvPT0_PKS0_i").constant_bytes, 0);
  EXPECT_EQ(r.at("_Z5spillPfii").registers, 32);
  EXPECT_EQ(r.at("_Z5spillPfii").local_bytes, 1024);
}

TEST(PtxasReport, OlderLmemFormatAndNoise) {
  // Older ptxas put lmem/smem on the "Used" line; compile errors and other text are ignored.
  const std::string log =
      "t.cu(3): warning: something unrelated\n"
      "ptxas info    : Compiling entry function 'k1' for 'sm_70'\n"
      "ptxas info    : Used 40 registers, 96 bytes lmem, 352 bytes cmem[0], 4096 bytes smem\n";
  const auto r = parse_ptxas_report(log);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r.at("k1"), (KernelResources{40, 4096, 0, 0, 96, 352}));
  EXPECT_TRUE(parse_ptxas_report("").empty());
  EXPECT_TRUE(parse_ptxas_report("error: expected a ';'\n").empty());
}

TEST(PtxasReport, JsonRoundTrip) {
  const auto r = parse_ptxas_report(kSm80Log);
  EXPECT_EQ(resources_from_json(resources_to_json(r)), r);
  EXPECT_TRUE(resources_from_json("{}").empty());
  EXPECT_THROW(resources_from_json("{not json"), Error);
}

TEST(DeviceInfoJson, ArchAndFields) {
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 62914560;
  EXPECT_EQ(d.arch(), "sm_90");
  const auto j = to_json(d);
  EXPECT_EQ(j.at("arch"), "sm_90");
  EXPECT_EQ(j.at("compute_capability"), "9.0");
  EXPECT_EQ(j.at("sm_count"), 132);
  EXPECT_EQ(j.at("l2_bytes"), 62914560);
  EXPECT_EQ(j.at("name"), "NVIDIA H200");
  for (const char* key :
       {"uuid", "pci_bus_id", "memory_bytes", "smem_per_block_optin", "max_threads_per_block",
        "max_regs_per_block", "sm_clock_khz", "mem_clock_khz", "driver_version"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
}

}  // namespace
}  // namespace ktune::harness
