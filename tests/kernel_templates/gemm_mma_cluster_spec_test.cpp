// unit: the cluster split-K template's host side: its name, one launch with the split on grid.z
// and no workspace, shared memory as the larger of pipeline and partial tile, the mma rules it
// inherits and the cluster's own rejections with their reasons, and sm_90 as its oldest arch.

#include <gtest/gtest.h>

#include "gemm_mma_samples.hpp"
#include "gemm_samples.hpp"
#include "kernel_templates/gemm/gemm_mma_cluster_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::gemm_problem;
using testing::mma_cluster_config;

const KernelSpec& cluster() { return find_spec("gemm", "mma_cluster"); }

TEST(MmaClusterSpec, IsRegisteredInTheGemmFamily) {
  EXPECT_EQ(cluster().kernel(), "gemm");
  EXPECT_EQ(cluster().source_name(), "gemm_mma_cluster.cu");
  const auto files = kernel_source_files("gemm");
  EXPECT_NE(std::find(files.begin(), files.end(), "gemm_mma_cluster.cu"), files.end());
}

TEST(MmaClusterSpec, CanonicalName) {
  const Problem p = gemm_problem(64, 1024, 1024, DType::kBF16, "nt");
  EXPECT_EQ(cluster().canonical_name(p, mma_cluster_config(16, 64, 128, 1, 4, 4, 4, 1)),
            "gemm.bf16.nt.mma_cluster.16x64x128.w1x4.s4.sk4.g1");
  const Problem q = gemm_problem(64, 1024, 1024, DType::kF16, "nn+bias+silu");
  EXPECT_EQ(cluster().canonical_name(q, mma_cluster_config(64, 128, 32, 2, 2, 2, 2, 8)),
            "gemm.f16.nn+bias+silu.mma_cluster.64x128x32.w2x2.s2.sk2.g8");
}

TEST(MmaClusterSpec, OneLaunchWithTheSplitOnGridZAndNoWorkspace) {
  const Problem p = gemm_problem(100, 1000, 3000, DType::kBF16, "nt+bias");
  const Config c = mma_cluster_config(32, 64, 64, 1, 4, 4, 4, 2);
  const LaunchPlan plan = cluster().launch_plan(p, c);
  ASSERT_EQ(plan.launches.size(), 1u);
  const KernelLaunch& l = plan.launches[0];
  EXPECT_EQ(l.dims.grid.x, 4u * 16u);  // ceil(100 / 32) x ceil(1000 / 64) tiles
  EXPECT_EQ(l.dims.grid.y, 1u);
  EXPECT_EQ(l.dims.grid.z, 4u);
  EXPECT_EQ(l.dims.block.x, 128u);
  EXPECT_EQ(l.dims.dynamic_smem_bytes, 4u * (32 + 64) * 64 * 2);  // the pipeline: 48 KiB > 9 KiB partial
  for (const TensorSpec& t : plan.tensors) EXPECT_NE(t.role, TensorRole::kWorkspace) << t.name;
  EXPECT_NO_THROW((void)plan.tensor_index("bias"));
  EXPECT_EQ(l.name_expression, "ktune_gemm_mma_cluster<32,64,64,1,4,4,4,2,__nv_bfloat16,true,true,false>");
}

TEST(MmaClusterSpec, SharedMemoryIsThePipelineOrThePartialTile) {
  // 64x128 tile, BLOCK_K 32, 2 stages: pipeline 2 (64 + 128) 32 2 = 24 KiB, partial 64 (128 + 8) 4 = 34 KiB.
  const Config c = mma_cluster_config(64, 128, 32, 2, 2, 2, 2, 8);
  EXPECT_EQ(MmaClusterGemmSpec::cluster_shared_bytes(c), 64 * 136 * 4);
  const Config d = mma_cluster_config(16, 64, 128, 1, 4, 4, 4, 1);
  EXPECT_EQ(MmaClusterGemmSpec::cluster_shared_bytes(d), 4 * 80 * 128 * 2);
}

TEST(MmaClusterSpec, RejectsWithReasons) {
  const Problem p = gemm_problem(64, 1024, 1024, DType::kBF16, "nt");
  auto why = [&](const Config& c) { return cluster().rejection(p, c).value_or(""); };
  EXPECT_NE(why(mma_cluster_config(16, 64, 128, 1, 4, 4, 1, 1)).find("SPLIT_K"), std::string::npos);
  EXPECT_NE(why(mma_cluster_config(16, 64, 128, 1, 4, 4, 16, 1)).find("SPLIT_K"), std::string::npos);
  // 16 x 32 / 4 = 128 groups: 3 does not divide them.
  EXPECT_NE(why(mma_cluster_config(16, 32, 64, 1, 2, 2, 3, 1)).find("does not divide"), std::string::npos);
  // The mma rules hold: warps must tile the block.
  EXPECT_NE(why(mma_cluster_config(16, 64, 128, 2, 4, 4, 4, 1)).find("WARPS_M"), std::string::npos);
  EXPECT_NE(cluster().rejection(gemm_problem(64, 64, 64, DType::kF32, "nt"), cluster().default_config(p)),
            std::nullopt);
  for (const Config& c : testing::mma_cluster_samples()) EXPECT_EQ(cluster().rejection(p, c), std::nullopt);
  EXPECT_EQ(cluster().rejection(p, cluster().default_config(p)), std::nullopt);
}

TEST(MmaClusterSpec, CStoresAskForEightBytes) {
  const Problem p = gemm_problem(64, 1024, 1024, DType::kBF16, "nt");
  bool seen = false;
  for (const AlignmentRule& r : cluster().alignment(p, cluster().default_config(p))) {
    EXPECT_FALSE(r.required) << r.tensor;
    if (r.tensor == "c") {
      EXPECT_EQ(r.bytes, 8);
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
}

TEST(MmaClusterSpec, NeedsSm90) {
  EXPECT_EQ(cluster().arch_rejection("sm_90"), std::nullopt);
  EXPECT_EQ(cluster().arch_rejection("sm_90a"), std::nullopt);
  const auto why = cluster().arch_rejection("sm_80");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cluster"), std::string::npos) << *why;
}

TEST(MmaClusterSpec, CompileRequestOfARejectedConfigThrows) {
  const Problem p = gemm_problem(64, 1024, 1024, DType::kBF16, "nt");
  EXPECT_THROW((void)cluster().compile_spec(p, mma_cluster_config(16, 64, 128, 1, 4, 4, 1, 1)), Error);
}

}  // namespace
}  // namespace ktune::kernel_templates
