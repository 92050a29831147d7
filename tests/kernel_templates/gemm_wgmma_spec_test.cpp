// unit: the wgmma template's host side (names, launch geometry, rejections with their reasons, the
// architecture check) and its index arithmetic (gemm_wgmma_layout.cuh, compiled here for the host):
// the shared-memory tile offsets the loaders write against the PTX ISA's canonical 128B-swizzle
// layouts, and the matrix descriptors decoded by a model of how wgmma reads shared memory, so a
// descriptor that points at the wrong element fails here rather than on the GPU.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "gemm_samples.hpp"
#include "gemm_wgmma_samples.hpp"
#include "kernel_templates/gemm/gemm_wgmma_layout.cuh"
#include "kernel_templates/gemm/gemm_wgmma_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::gemm_problem;
using testing::wgmma_config;

const KernelSpec& wgmma() { return find_spec("gemm", "wgmma"); }

TEST(WgmmaSpec, IsRegisteredInTheGemmFamily) {
  EXPECT_EQ(wgmma().kernel(), "gemm");
  EXPECT_EQ(wgmma().source_name(), "gemm_wgmma.cu");
  const auto files = kernel_source_files("gemm");
  EXPECT_NE(std::find(files.begin(), files.end(), "gemm_wgmma.cu"), files.end());
}

TEST(WgmmaSpec, CanonicalNames) {
  const Problem p = gemm_problem(4096, 4096, 4096, DType::kBF16, "nt");
  EXPECT_EQ(wgmma().canonical_name(p, wgmma_config(128, 256, 4, 8)),
            "gemm.bf16.nt.wgmma.128x256x64.s4.sk1.g8");
  const Problem q = gemm_problem(512, 4096, 4096, DType::kF16, "nn+bias+silu");
  EXPECT_EQ(wgmma().canonical_name(q, wgmma_config(64, 64, 3, 1)),
            "gemm.f16.nn+bias+silu.wgmma.64x64x64.s3.sk1.g1");
}

TEST(WgmmaSpec, LaunchGeometryAndSm90aOption) {
  const Problem p = gemm_problem(1000, 3000, 520, DType::kBF16, "nt+bias");
  const Config c = wgmma_config(128, 256, 4, 8);
  const LaunchPlan plan = wgmma().launch_plan(p, c);
  ASSERT_EQ(plan.launches.size(), 1u);
  const KernelLaunch& l = plan.launches[0];
  EXPECT_EQ(l.dims.grid.x, 8u * 12u);  // ceil(1000/128) * ceil(3000/256)
  EXPECT_EQ(l.dims.block.x, 256u);     // two warpgroups
  EXPECT_EQ(l.dims.dynamic_smem_bytes, 4u * (128 + 256) * 128 + 1024);
  EXPECT_EQ(l.name_expression, "ktune_gemm_wgmma<128,256,4,8,__nv_bfloat16,true,true,false>");
  ASSERT_EQ(l.args.size(), 11u);
  EXPECT_EQ(l.args[3].kind, ArgSpec::Kind::kNullPointer);  // no split-K: no workspace
  EXPECT_EQ(l.args[4].tensor, "bias");
  EXPECT_EQ(l.args[7].integer, 520);
  EXPECT_EQ(l.args[8].kind, ArgSpec::Kind::kRowStride);  // lda, ldb, ldc written contiguous
  EXPECT_EQ(l.args[8].integer, 520);
  EXPECT_EQ(l.args[9].integer, 520);
  EXPECT_EQ(l.args[10].tensor, "c");
  EXPECT_EQ(l.args[10].integer, 3000);
  EXPECT_EQ(plan.tensor_index("bias"), 3);
  const CompileSpec cs = wgmma().compile_spec(p, c);
  EXPECT_EQ(cs.options.back(), "--gpu-architecture=sm_90a");
  const Problem nn = gemm_problem(64, 64, 64, DType::kF16, "nn");
  EXPECT_EQ(wgmma().launch_plan(nn, wgmma_config(64, 64, 3, 1)).launches[0].args[4].kind,
            ArgSpec::Kind::kNullPointer);
  EXPECT_EQ(wgmma().compile_spec(nn, wgmma_config(64, 64, 3, 1)).name_expressions[0],
            "ktune_gemm_wgmma<64,64,3,1,__half,false,false,false>");
}

TEST(WgmmaSpec, SamplesAndDefaultAreAccepted) {
  for (const char* layout : {"nt", "nn", "nt+bias+silu"}) {
    const Problem p = gemm_problem(77, 93, 331, DType::kBF16, layout);
    for (const Config& c : testing::wgmma_samples())
      EXPECT_EQ(wgmma().rejection(p, c), std::nullopt) << layout;
    EXPECT_EQ(wgmma().rejection(p, wgmma().default_config(p)), std::nullopt);
  }
}

TEST(WgmmaSpec, RejectsWithReasons) {
  const Problem p = gemm_problem(512, 512, 512, DType::kBF16, "nt");
  const auto why = [&](const Problem& q, const Config& c) { return wgmma().rejection(q, c).value_or(""); };
  EXPECT_NE(
      why(gemm_problem(512, 512, 512, DType::kF32, "nt"), wgmma_config(128, 128, 4, 8)).find("f16 and bf16"),
      std::string::npos);
  EXPECT_NE(why(gemm_problem(512, 512, 512, DType::kBF16, "tn"), wgmma_config(128, 128, 4, 8)).find("layout"),
            std::string::npos);
  EXPECT_NE(why(p, wgmma_config(32, 128, 4, 8)).find("BLOCK_M=32"), std::string::npos);
  EXPECT_NE(why(p, wgmma_config(128, 96, 4, 8)).find("BLOCK_N=96"), std::string::npos);
  EXPECT_NE(why(p, wgmma_config(128, 128, 2, 8)).find("STAGES=2"), std::string::npos);
  EXPECT_NE(why(p, wgmma_config(128, 256, 5, 8)).find("227 KiB"), std::string::npos);  // 5 * 48 KiB
  const Config split = wgmma_config(128, 128, 4, 8, 17);
  EXPECT_NE(why(p, split).find("SPLIT_K=17 exceeds 16"), std::string::npos);
  EXPECT_NE(
      why(gemm_problem(512, 512, 130, DType::kBF16, "nt"), wgmma_config(128, 128, 4, 8, 4)).find("3 k tiles"),
      std::string::npos);
  Config bk = wgmma_config(128, 128, 4, 8);
  bk.set("BLOCK_K", 32);
  EXPECT_NE(why(p, bk).find("BLOCK_K=32"), std::string::npos);
  Config missing = wgmma_config(128, 128, 4, 8);
  missing.erase("SWIZZLE");
  EXPECT_NE(why(p, missing).find("SWIZZLE"), std::string::npos);
  EXPECT_THROW(wgmma().compile_spec(p, split), Error);
}

TEST(WgmmaSpec, SplitKWritesSlicesThenReducesInOrder) {
  const Problem p = gemm_problem(512, 1024, 4096, DType::kBF16, "nt");
  const LaunchPlan plan = wgmma().launch_plan(p, wgmma_config(128, 128, 6, 8, 4));
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_EQ(plan.launches[0].dims.grid.x, 4u * 8u);
  EXPECT_EQ(plan.launches[0].dims.grid.z, 4u);
  EXPECT_EQ(plan.launches[0].args[3].tensor, "workspace");
  EXPECT_EQ(plan.launches[1].name_expression, "ktune_gemm_splitk_reduce<__nv_bfloat16>");
  EXPECT_EQ(plan.tensors.at(plan.tensor_index("workspace")).elements, 4 * 512 * 1024);
  // With an epilogue the finishing pass applies it to the sum.
  const Problem e = gemm_problem(512, 1024, 4096, DType::kF16, "nt+bias+silu");
  const LaunchPlan pe = wgmma().launch_plan(e, wgmma_config(128, 128, 6, 8, 2));
  EXPECT_EQ(pe.launches.back().name_expression, "ktune_gemm_finish<__half,true,true>");
  const CompileSpec cs = wgmma().compile_spec(e, wgmma_config(128, 128, 6, 8, 2));
  EXPECT_EQ(cs.name_expressions.size(), 2u);
  EXPECT_EQ(wgmma().canonical_name(p, wgmma_config(128, 128, 6, 8, 4)),
            "gemm.bf16.nt.wgmma.128x128x64.s6.sk4.g8");
}

TEST(WgmmaSpec, OnlyHopperArchitectures) {
  EXPECT_EQ(WgmmaGemmSpec::rejection_for_arch("sm_90"), std::nullopt);
  EXPECT_EQ(WgmmaGemmSpec::rejection_for_arch("sm_90a"), std::nullopt);
  for (const char* arch : {"sm_80", "sm_89", "sm_100", "sm_120"}) {
    const auto why = WgmmaGemmSpec::rejection_for_arch(arch);
    ASSERT_TRUE(why) << arch;
    EXPECT_NE(why->find(arch), std::string::npos);
    EXPECT_NE(why->find("sm_90a"), std::string::npos);
  }
}

// --- index arithmetic, against the PTX ISA's description (wgmma "Shared Memory Matrix Layout") ---

/// The 128B swizzle on a shared-memory byte address: bits [4,7) ^= bits [7,10) (Swizzle<3,4,3>).
unsigned sw128(unsigned addr) { return addr ^ (((addr >> 7) & 7u) << 4); }

struct Desc {
  unsigned start, lead, stride, base_offset, mode;
};
Desc decode(unsigned long long d) {
  return {static_cast<unsigned>(d & 0x3FFF) << 4, static_cast<unsigned>((d >> 16) & 0x3FFF) << 4,
          static_cast<unsigned>((d >> 32) & 0x3FFF) << 4, static_cast<unsigned>((d >> 49) & 7),
          static_cast<unsigned>(d >> 62)};
}

TEST(WgmmaLayout, DescriptorBitFields) {
  // start 0x12340 >> 4, leading 16 >> 4 = 1 at bit 16, stride 1024 >> 4 = 64 at bit 32, mode 1 at bit 62.
  EXPECT_EQ(ktune_wgmma::make_desc(0x12340u, 16u, 1024u), 0x4000004000011234ull);
  const Desc d = decode(ktune_wgmma::mnmajor_desc(0x8000u, 3));
  EXPECT_EQ(d.start, 0x8000u + 3u * 2048u);
  EXPECT_EQ(d.lead, 8192u);
  EXPECT_EQ(d.stride, 1024u);
  EXPECT_EQ(d.base_offset, 0u);
  EXPECT_EQ(d.mode, 1u);  // 128-byte swizzle
}

TEST(WgmmaLayout, KMajorTileIsTheCanonicalSwizzledLayout) {
  // Canonical K-major 128B layout (bf16, T = 8): ((8,m),(T,2k)) : ((8T,SBO),(1,T)) with SBO = 1024
  // bytes: row r at (r/8) 1024 + (r%8) 128 bytes, k contiguous, then swizzled.
  std::set<int> seen;
  for (int r = 0; r < 256; ++r) {
    for (int c = 0; c < 8; ++c) {
      const unsigned canonical = static_cast<unsigned>((r / 8) * 1024 + (r % 8) * 128 + c * 16);
      EXPECT_EQ(static_cast<unsigned>(ktune_wgmma::kmajor_offset(r, c)), sw128(canonical)) << r << "," << c;
      seen.insert(ktune_wgmma::kmajor_offset(r, c));
    }
  }
  EXPECT_EQ(seen.size(), 256u * 8u);
  EXPECT_EQ(*seen.rbegin(), 256 * 128 - 16);
}

/// Byte offset (from the tile) where the loader put element (row, k) of a K-major tile.
unsigned kmajor_element(int row, int k) {
  return static_cast<unsigned>(ktune_wgmma::kmajor_offset(row, k / 8) + (k % 8) * 2);
}
/// Byte offset where the loader put element (k, n) of an MN-major tile.
unsigned mnmajor_element(int k, int n) {
  return static_cast<unsigned>(ktune_wgmma::mnmajor_offset(k, n / 8) + (n % 8) * 2);
}

TEST(WgmmaLayout, KMajorDescriptorsReadWhatTheLoaderWrote) {
  // wgmma reads element (i, j) of a K-major m64 x k16 (or n x k16) operand at
  // sw128(start + (i/8) SBO + (i%8) 128 + 2 j): check every slice of every warpgroup's rows.
  constexpr unsigned kTile = 5 * 1024;  // any 1024-byte aligned stage
  for (int wg = 0; wg < 4; ++wg) {
    const unsigned a_tile = kTile + static_cast<unsigned>(wg) * 64u * 128u;
    for (int kk = 0; kk < 4; ++kk) {
      const Desc d = decode(ktune_wgmma::kmajor_desc(a_tile, kk));
      ASSERT_EQ(d.mode, 1u);
      ASSERT_EQ(d.base_offset, 0u);
      for (int i = 0; i < 64; ++i) {
        for (int j = 0; j < 16; ++j) {
          const unsigned addr = sw128(d.start + (i / 8) * d.stride + (i % 8) * 128u + 2u * j);
          ASSERT_EQ(addr, kTile + kmajor_element(wg * 64 + i, kk * 16 + j))
              << wg << " " << kk << " " << i << " " << j;
        }
      }
    }
  }
}

TEST(WgmmaLayout, MnMajorDescriptorsReadWhatTheLoaderWrote) {
  // Canonical MN-major 128B layout (bf16, T = 8): ((T,8,m),(8,k)) : ((1,T,LBO),(8T,SBO)): n in
  // 64-element (128-byte) runs, runs LBO apart; k rows 128 bytes apart, 8-row groups SBO apart.
  constexpr unsigned kTile = 3 * 1024;
  for (int bn : {64, 128, 256}) {
    std::set<unsigned> seen;
    for (int kk = 0; kk < 4; ++kk) {
      const Desc d = decode(ktune_wgmma::mnmajor_desc(kTile, kk));
      for (int k = 0; k < 16; ++k) {
        for (int n = 0; n < bn; ++n) {
          const unsigned addr =
              sw128(d.start + (n / 64) * d.lead + (n % 64) * 2u + (k % 8) * 128u + (k / 8) * d.stride);
          ASSERT_EQ(addr, kTile + mnmajor_element(kk * 16 + k, n)) << bn << " " << kk << " " << k << " " << n;
          seen.insert(addr);
        }
      }
    }
    EXPECT_EQ(seen.size(), 64u * static_cast<unsigned>(bn));  // the tile, each element once
    EXPECT_EQ(*seen.rbegin() + 2 - kTile, 64u * 2u * static_cast<unsigned>(bn));
  }
}

TEST(WgmmaLayout, AccumulatorFragmentCoversTheTileOnce) {
  for (int n : {64, 128, 256}) {
    std::vector<int> hits(64 * n, 0);
    for (int t = 0; t < 128; ++t) {
      for (int i = 0; i < n / 2; ++i) {
        const int row = ktune_wgmma::acc_row(t, i);
        const int col = ktune_wgmma::acc_col(t, i);
        ASSERT_TRUE(row >= 0 && row < 64 && col >= 0 && col < n);
        ++hits[row * n + col];
        if (i % 2 == 1) {
          EXPECT_EQ(col, ktune_wgmma::acc_col(t, i - 1) + 1);  // the stored pairs
        }
      }
    }
    EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; })) << n;
  }
  // PTX ISA, m64nNk16 D fragment: thread 37 (warp 1, lane 5) holds d0 at row 16 + 1, column 2.
  EXPECT_EQ(ktune_wgmma::acc_row(37, 0), 17);
  EXPECT_EQ(ktune_wgmma::acc_col(37, 0), 2);
  EXPECT_EQ(ktune_wgmma::acc_row(37, 2), 25);
  EXPECT_EQ(ktune_wgmma::acc_col(37, 5), 11);
}

TEST(WgmmaLayout, GroupedBlockOrderVisitsEveryTileOnce) {
  for (const auto& [tiles_m, tiles_n] : std::vector<std::pair<int, int>>{{7, 5}, {1, 9}, {16, 16}, {9, 1}}) {
    std::set<std::pair<int, int>> seen;
    for (int pid = 0; pid < tiles_m * tiles_n; ++pid) {
      int tm = -1;
      int tn = -1;
      ktune_wgmma::block_coords<8>(pid, tiles_m, tiles_n, tm, tn);
      ASSERT_TRUE(tm >= 0 && tm < tiles_m && tn >= 0 && tn < tiles_n);
      seen.insert({tm, tn});
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(tiles_m * tiles_n));
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
