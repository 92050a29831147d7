// The operators' specs without CUDA: names, rejections (bad configs and bad input, before any
// launch), name expressions, launch geometry and arguments, work counts, references, registry.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernel_templates/rmsnorm/rmsnorm_bulk_spec.hpp"
#include "kernel_templates/rmsnorm/rmsnorm_spec.hpp"
#include "kernel_templates/rmsnorm_rope/rmsnorm_rope_bulk_spec.hpp"
#include "kernel_templates/rmsnorm_rope/rmsnorm_rope_spec.hpp"
#include "kernel_templates/softmax/softmax_cluster_spec.hpp"
#include "kernel_templates/softmax/softmax_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "kernel_templates/swiglu/swiglu_spec.hpp"
#include "ktune/error.hpp"
#include "ops_samples.hpp"

namespace ktune::kernel_templates {
namespace {

Problem rms(int64_t rows, int64_t hidden, DType dtype = DType::kBF16, std::string mode = "") {
  return {{{"rows", rows}, {"hidden", hidden}}, dtype, std::move(mode)};
}
Problem rope(int64_t tokens, int64_t hq, int64_t hk, int64_t d, DType dtype = DType::kBF16,
             std::string mode = "") {
  return {{{"tokens", tokens}, {"heads_q", hq}, {"heads_kv", hk}, {"head_dim", d}}, dtype, std::move(mode)};
}
Problem smx(int64_t rows, int64_t cols, DType dtype = DType::kBF16, std::string mode = "") {
  return {{{"rows", rows}, {"cols", cols}}, dtype, std::move(mode)};
}
Problem swi(int64_t m, int64_t i, DType dtype = DType::kBF16, std::string mode = "") {
  return {{{"m", m}, {"i", i}}, dtype, std::move(mode)};
}
Config rms_cfg(int64_t t, int64_t r, int64_t v, int64_t reg) {
  return {"rowwise", {{"THREADS", t}, {"ROWS", r}, {"VEC", v}, {"REG", reg}}};
}

void expect_bad_input(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(OpsSpec, RegistryKnowsEveryOperator) {
  for (const char* k : {"rmsnorm", "rmsnorm_rope", "softmax", "swiglu"}) {
    const bool two = std::string(k) != "swiglu";  // rmsnorm, rmsnorm_rope, softmax: two variants
    ASSERT_EQ(specs_of(k).size(), two ? 2u : 1u) << k;
    EXPECT_EQ(specs_of(k).front()->kernel(), k);
    EXPECT_FALSE(template_source_hash(k).empty()) << k;
    const auto files = kernel_source_files(k);
    EXPECT_NE(std::find(files.begin(), files.end(), std::string(k) + "_reference.cu"), files.end()) << k;
  }
  EXPECT_EQ(&find_spec("rmsnorm", "rowwise"), specs_of("rmsnorm").front());
  EXPECT_EQ(&find_spec("rmsnorm", "bulk"), specs_of("rmsnorm").back());
  const auto files = kernel_source_files("rmsnorm");
  EXPECT_NE(std::find(files.begin(), files.end(), "rmsnorm_bulk.cu"), files.end());
  EXPECT_NE(template_source_hash("rmsnorm"), template_source_hash("softmax"));
}

TEST(OpsSpec, RmsNormNamesAndExpressions) {
  const RmsNormSpec s;
  EXPECT_EQ(s.canonical_name(rms(16, 4096), rms_cfg(256, 1, 8, 1)), "rmsnorm.bf16.t256.r1.v8.reg1");
  EXPECT_EQ(s.canonical_name(rms(16, 4096, DType::kF32, "residual"), rms_cfg(32, 4, 4, 0)),
            "rmsnorm.f32.residual.t32.r4.v4.reg0");
  // REG 1: CHUNKS = ceil(4096 / (256 * 8)) = 2; REG 0: 0 (one cubin for every hidden).
  EXPECT_EQ(s.compile_spec(rms(16, 4096), rms_cfg(256, 1, 8, 1)).name_expressions.at(0),
            "ktune_rmsnorm<256,1,8,2,false,__nv_bfloat16>");
  EXPECT_EQ(
      s.compile_spec(rms(16, 4095, DType::kF16, "residual"), rms_cfg(128, 2, 8, 0)).name_expressions.at(0),
      "ktune_rmsnorm<128,2,8,0,true,__half>");
  EXPECT_EQ(s.compile_spec(rms(1, 4095), rms_cfg(128, 2, 8, 1)).name_expressions.at(0),
            "ktune_rmsnorm<128,2,8,4,false,__nv_bfloat16>");
}

TEST(OpsSpec, RmsNormRejections) {
  const RmsNormSpec s;
  const Problem p = rms(7, 4096);
  EXPECT_EQ(s.rejection(p, rms_cfg(256, 1, 8, 1)), std::nullopt);
  EXPECT_NE(s.rejection(p, rms_cfg(48, 1, 8, 0)), std::nullopt);             // not a multiple of 32
  EXPECT_NE(s.rejection(p, rms_cfg(512, 4, 8, 0)), std::nullopt);            // 2048 threads
  EXPECT_NE(s.rejection(p, rms_cfg(256, 1, 16, 0)), std::nullopt);           // 32 bytes
  EXPECT_NE(s.rejection(p, rms_cfg(256, 1, 3, 0)), std::nullopt);            // not a power of two
  EXPECT_NE(s.rejection(p, rms_cfg(256, 1, 8, 2)), std::nullopt);            // REG 0/1
  EXPECT_NE(s.rejection(rms(7, 8192), rms_cfg(32, 1, 8, 1)), std::nullopt);  // 256 elements a thread
  EXPECT_EQ(s.rejection(rms(7, 8192), rms_cfg(32, 1, 8, 0)), std::nullopt);  // two-pass serves it
  EXPECT_NE(s.rejection(rms(7, 4096, DType::kF32), rms_cfg(256, 1, 8, 0)), std::nullopt);  // f32: VEC <= 4
  Config extra = rms_cfg(256, 1, 8, 0);
  extra.set("SPLIT", 1);
  EXPECT_NE(s.rejection(p, extra), std::nullopt);
  Config missing = rms_cfg(256, 1, 8, 0);
  missing.erase("REG");
  EXPECT_NE(s.rejection(p, missing), std::nullopt);
  // Bad input throws before anything is launched.
  expect_bad_input([&] { s.launch_plan(rms(7, 4096, DType::kFP8E4M3), rms_cfg(256, 1, 8, 0)); },
                   "f32, f16, bf16");
  expect_bad_input([&] { s.compile_spec(rms(7, 4096, DType::kBF16, "nt"), rms_cfg(256, 1, 8, 0)); }, "mode");
  expect_bad_input([&] { s.launch_plan(rms(0, 4096), rms_cfg(256, 1, 8, 0)); }, "rows=0");
  expect_bad_input([&] { s.reference({{{"rows", 4}}, DType::kBF16, ""}); }, "hidden");
}

TEST(OpsSpec, RmsNormPlanWorkAndReference) {
  const RmsNormSpec s;
  const Problem p = rms(37, 4095, DType::kBF16, "residual");
  const LaunchPlan plan = s.launch_plan(p, rms_cfg(256, 4, 8, 0));
  ASSERT_EQ(plan.tensors.size(), 5u);
  EXPECT_EQ(plan.tensors[plan.tensor_index("w")].elements, 4095);
  EXPECT_EQ(plan.tensors[plan.tensor_index("residual_out")].role, TensorRole::kOutput);
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].dims.grid, (Dim3{10, 1, 1}));  // ceil(37 / 4)
  EXPECT_EQ(plan.launches[0].dims.block, (Dim3{1024, 1, 1}));
  ASSERT_EQ(plan.launches[0].args.size(), 8u);
  EXPECT_EQ(plan.launches[0].args[1].tensor, "residual");
  EXPECT_EQ(plan.launches[0].args[6].integer, 4095);
  const WorkCounts w = s.work(p);
  EXPECT_DOUBLE_EQ(w.min_bytes, 4.0 * 37 * 4095 * 2 + 4095 * 2);
  const ReferenceSpec r = s.reference(p);
  EXPECT_EQ(r.compare.size(), 2u);
  EXPECT_EQ(r.compile.name_expressions.at(0), "ktune_rmsnorm_reference<__nv_bfloat16,true>");
  EXPECT_EQ(r.plan.launches[0].dims.grid, (Dim3{10, 1, 1}));
  const LaunchPlan plain = s.launch_plan(rms(1, 4096), rms_cfg(256, 1, 8, 1));
  EXPECT_EQ(plain.tensors.size(), 3u);
  EXPECT_EQ(plain.launches[0].args[1].kind, ArgSpec::Kind::kNullPointer);
  EXPECT_DOUBLE_EQ(s.work(rms(1, 4096)).min_bytes, 2.0 * 4096 * 2 + 4096 * 2);
  EXPECT_EQ(s.alignment(p, rms_cfg(256, 4, 8, 0)).at(0).bytes, 16);
}

Config bulk_cfg(int64_t threads, int64_t stages, int64_t steps, int64_t write) {
  return {"bulk", {{"THREADS", threads}, {"STAGES", stages}, {"STEPS", steps}, {"WRITE", write}}};
}

TEST(OpsSpec, RmsNormBulkNamesRulesAndPlan) {
  const RmsNormBulkSpec s;
  const Problem p = rms(37, 1032, DType::kBF16, "residual");
  EXPECT_EQ(s.canonical_name(p, bulk_cfg(256, 3, 8, 1)), "rmsnorm.bf16.residual.bulk.t256.s3.n8.w1");
  EXPECT_EQ(s.compile_spec(rms(5, 4096, DType::kF16), bulk_cfg(512, 4, 16, 0)).name_expressions.at(0),
            "ktune_rmsnorm_bulk<512,4,16,0,false,__half>");
  EXPECT_EQ(s.rejection(p, bulk_cfg(256, 3, 8, 1)), std::nullopt);
  EXPECT_NE(s.rejection(p, bulk_cfg(48, 3, 8, 0)), std::nullopt);      // not a multiple of 32
  EXPECT_NE(s.rejection(p, bulk_cfg(2048, 3, 8, 0)), std::nullopt);    // > 1024 threads
  EXPECT_NE(s.rejection(p, bulk_cfg(256, 1, 8, 0)), std::nullopt);     // one stage
  EXPECT_NE(s.rejection(p, bulk_cfg(256, 9, 8, 0)), std::nullopt);     // > 8 stages
  EXPECT_NE(s.rejection(p, bulk_cfg(256, 2, 8, 1)), std::nullopt);     // bulk stores need 3 stages
  EXPECT_NE(s.rejection(p, bulk_cfg(256, 3, 8, 2)), std::nullopt);     // WRITE 0/1
  EXPECT_NE(s.rejection(p, bulk_cfg(256, 3, 2000, 0)), std::nullopt);  // STEPS <= 1024
  EXPECT_NE(s.rejection(p, rms_cfg(256, 1, 8, 0)), std::nullopt);      // a rowwise config
  // A 4095-element bf16 row is 8190 bytes: not 16-byte units.
  const auto odd = s.rejection(rms(7, 4095), bulk_cfg(256, 2, 4, 0));
  ASSERT_TRUE(odd.has_value());
  EXPECT_NE(odd->find("16-byte units"), std::string::npos) << *odd;
  // Shared memory: f32 rows of 8192 (32 KB), residual: (1 + 4 * 2) * 32 KB > 227 KB; plain fits.
  EXPECT_NE(s.rejection(rms(7, 8192, DType::kF32, "residual"), bulk_cfg(256, 4, 4, 0)), std::nullopt);
  EXPECT_EQ(s.rejection(rms(7, 8192, DType::kF32), bulk_cfg(256, 4, 4, 0)), std::nullopt);
  EXPECT_EQ(RmsNormBulkSpec::shared_bytes(rms(7, 8192, DType::kF32), bulk_cfg(256, 4, 4, 0)), 5 * 32768);
  EXPECT_EQ(s.arch_rejection("sm_90a"), std::nullopt);
  EXPECT_EQ(s.arch_rejection("sm_100"), std::nullopt);
  EXPECT_NE(s.arch_rejection("sm_89"), std::nullopt);
  EXPECT_NE(s.arch_rejection("hopper"), std::nullopt);
  expect_bad_input([&] { s.launch_plan(rms(7, 4095), bulk_cfg(256, 2, 4, 0)); }, "16-byte units");

  const LaunchPlan plan = s.launch_plan(p, bulk_cfg(256, 3, 8, 1));
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].dims.grid, (Dim3{5, 1, 1}));  // ceil(37 / 8)
  EXPECT_EQ(plan.launches[0].dims.block, (Dim3{256, 1, 1}));
  EXPECT_EQ(plan.launches[0].dims.dynamic_smem_bytes, (1u + 3u * 2u) * 1032u * 2u);
  // The rowwise variant's tensors, arguments, work and reference.
  const RmsNormSpec rowwise;
  const LaunchPlan rp = rowwise.launch_plan(p, rms_cfg(256, 1, 8, 0));
  ASSERT_EQ(plan.tensors.size(), rp.tensors.size());
  for (std::size_t i = 0; i < plan.tensors.size(); ++i) EXPECT_EQ(plan.tensors[i].name, rp.tensors[i].name);
  ASSERT_EQ(plan.launches[0].args.size(), rp.launches[0].args.size());
  EXPECT_EQ(plan.launches[0].args[4].tensor, "residual_out");
  EXPECT_DOUBLE_EQ(s.work(p).min_bytes, rowwise.work(p).min_bytes);
  EXPECT_EQ(s.reference(p).compile.name_expressions, rowwise.reference(p).compile.name_expressions);
  const auto rules = s.alignment(p, bulk_cfg(256, 3, 8, 1));
  ASSERT_EQ(rules.size(), 5u);
  for (const auto& rule : rules) {
    EXPECT_EQ(rule.bytes, 16) << rule.tensor;
    EXPECT_TRUE(rule.required) << rule.tensor;
  }
  EXPECT_EQ(s.rejection(rms(3, 1024), s.default_config(rms(3, 1024))), std::nullopt);
}

TEST(OpsSpec, SoftmaxClusterNamesRulesAndPlan) {
  const SoftmaxClusterSpec s;
  const auto cfg = [](int64_t threads, int64_t cluster) {
    return Config{"cluster", {{"THREADS", threads}, {"CLUSTER", cluster}}};
  };
  const Problem p = smx(64, 262144, DType::kBF16, "causal");
  EXPECT_EQ(s.canonical_name(p, cfg(512, 8)), "softmax.bf16.causal.cluster.t512.c8");
  EXPECT_EQ(s.compile_spec(p, cfg(512, 8)).name_expressions.at(0),
            "ktune_softmax_cluster<512,8,1,__nv_bfloat16>");
  EXPECT_EQ(s.rejection(p, cfg(512, 8)), std::nullopt);
  EXPECT_EQ(s.rejection(p, cfg(512, 2)).has_value(), true);  // 256 KB a block
  EXPECT_NE(s.rejection(p, cfg(48, 8)), std::nullopt);
  EXPECT_NE(s.rejection(p, cfg(512, 9)), std::nullopt);                 // past the portable cluster size
  EXPECT_NE(s.rejection(smx(7, 4095), cfg(512, 4)), std::nullopt);      // 8190-byte rows
  EXPECT_NE(s.rejection(smx(70000, 1024), cfg(512, 4)), std::nullopt);  // grid.y
  EXPECT_NE(s.arch_rejection("sm_89"), std::nullopt);
  EXPECT_EQ(s.arch_rejection("sm_90"), std::nullopt);
  // 262144 / 8 = 32768 columns a block, 64 KB.
  EXPECT_EQ(SoftmaxClusterSpec::segment(p, cfg(512, 8)), 32768);
  // 4104 f32 columns over 3 blocks: 1368, already a multiple of 4 (16 bytes); over 8: 513 -> 516.
  EXPECT_EQ(SoftmaxClusterSpec::segment(smx(1, 4104, DType::kF32), cfg(256, 3)), 1368);
  EXPECT_EQ(SoftmaxClusterSpec::segment(smx(1, 4104, DType::kF32), cfg(256, 8)), 516);
  const LaunchPlan plan = s.launch_plan(p, cfg(512, 8));
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].dims.grid, (Dim3{8, 64, 1}));
  EXPECT_EQ(plan.launches[0].dims.block, (Dim3{512, 1, 1}));
  EXPECT_EQ(plan.launches[0].dims.dynamic_smem_bytes, 65536u);
  ASSERT_EQ(plan.launches[0].args.size(), 8u);
  EXPECT_EQ(plan.launches[0].args[7].integer, 32768);
  const SoftmaxSpec rowwise;
  const Config online = {"rowwise", {{"THREADS", 256}, {"ROWS", 1}, {"VEC", 8}, {"ONLINE", 1}}};
  const LaunchPlan rp = rowwise.launch_plan(p, online);
  ASSERT_EQ(plan.tensors.size(), rp.tensors.size());
  for (std::size_t i = 0; i < 7; ++i)
    EXPECT_EQ(plan.launches[0].args[i].kind, rp.launches[0].args[i].kind) << i;
  EXPECT_DOUBLE_EQ(s.work(p).min_bytes, rowwise.work(p).min_bytes);
  const Problem padded = smx(4, 4096, DType::kF16, "padding");
  EXPECT_EQ(s.launch_plan(padded, cfg(256, 4)).tensors.size(), 3u);
  const auto rules = s.alignment(padded, cfg(256, 4));
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_TRUE(rules[0].required);
  EXPECT_EQ(rules[0].bytes, 16);
  EXPECT_EQ(s.rejection(p, s.default_config(p)), std::nullopt);
}

TEST(OpsSpec, RopeBulkNamesRulesAndPlan) {
  const RmsNormRopeBulkSpec s;
  const auto cfg = [](int64_t threads, int64_t stages, int64_t steps) {
    return Config{"bulk", {{"THREADS", threads}, {"STAGES", stages}, {"STEPS", steps}}};
  };
  const Problem p = rope(13, 32, 8, 128, DType::kBF16, "gptj");
  EXPECT_EQ(s.canonical_name(p, cfg(256, 3, 4)), "rmsnorm_rope.bf16.gptj.bulk.t256.s3.n4");
  EXPECT_EQ(s.compile_spec(p, cfg(256, 3, 4)).name_expressions.at(0),
            "ktune_rmsnorm_rope_bulk<128,256,3,4,true,__nv_bfloat16>");
  EXPECT_EQ(s.rejection(p, cfg(256, 3, 4)), std::nullopt);
  EXPECT_NE(s.rejection(p, cfg(48, 3, 4)), std::nullopt);
  EXPECT_NE(s.rejection(p, cfg(256, 1, 4)), std::nullopt);
  EXPECT_NE(s.rejection(p, cfg(256, 9, 4)), std::nullopt);
  EXPECT_NE(s.rejection(p, cfg(256, 3, 0)), std::nullopt);
  // 64 q heads of f32 and head_dim 256: a 64 KB+ stage; 4 of them exceed 227 KB.
  EXPECT_NE(s.rejection(rope(4, 64, 8, 256, DType::kF32), cfg(256, 4, 1)), std::nullopt);
  EXPECT_NE(s.rejection(rope(4, 8, 8, 96), cfg(256, 3, 1)), std::nullopt);  // the headwise rules on head_dim
  EXPECT_NE(s.arch_rejection("sm_89"), std::nullopt);
  EXPECT_EQ(s.arch_rejection("sm_90a"), std::nullopt);
  // (32 + 8) heads of 128 bf16 plus a 512-byte table row a stage, and both weights.
  EXPECT_EQ(RmsNormRopeBulkSpec::shared_bytes(p, cfg(256, 3, 4)), 2 * 256 + 3 * (40 * 256 + 512));
  const LaunchPlan plan = s.launch_plan(p, cfg(256, 3, 4));
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].dims.grid, (Dim3{4, 1, 1}));  // ceil(13 / 4)
  EXPECT_EQ(plan.launches[0].dims.block, (Dim3{256, 1, 1}));
  const RmsNormRopeSpec headwise;
  const Config hw = {"headwise", {{"THREADS", 8}, {"HEADS", 8}, {"VEC", 8}, {"ITEMS", 1}, {"OCC", 0}}};
  const LaunchPlan hp = headwise.launch_plan(p, hw);
  ASSERT_EQ(plan.tensors.size(), hp.tensors.size());
  ASSERT_EQ(plan.launches[0].args.size(), hp.launches[0].args.size());
  for (std::size_t i = 0; i < plan.tensors.size(); ++i) EXPECT_EQ(plan.tensors[i].name, hp.tensors[i].name);
  EXPECT_DOUBLE_EQ(s.work(p).min_bytes, headwise.work(p).min_bytes);
  for (const auto& rule : s.alignment(p, cfg(256, 3, 4))) EXPECT_TRUE(rule.required) << rule.tensor;
  EXPECT_EQ(s.rejection(p, s.default_config(p)), std::nullopt);
}

TEST(OpsSpec, RopeRejectsBadHeadDimsBeforeLaunch) {
  const RmsNormRopeSpec s;
  const Config c = s.default_config(rope(1, 32, 8, 128));
  expect_bad_input([&] { s.launch_plan(rope(4, 32, 8, 127), c); }, "even head_dim");
  expect_bad_input([&] { s.compile_spec(rope(4, 32, 8, 96), c); }, "head_dim 64, 128 and 256");
  expect_bad_input([&] { s.reference(rope(4, 32, 8, 128, DType::kBF16, "rotate")); },
                   "neither 'neox' nor 'gptj'");
  expect_bad_input([&] { s.launch_plan(rope(4, 32, 8, 128, DType::kFP8E4M3), c); }, "f32, f16, bf16");
  for (int64_t d : {64, 128, 256}) {
    for (DType t : testing::ops_dtypes()) EXPECT_EQ(s.rejection(rope(3, 5, 1, d, t), c), std::nullopt) << d;
  }
}

TEST(OpsSpec, RopeNamesRulesAndPlan) {
  const RmsNormRopeSpec s;
  auto rc = [](int64_t t, int64_t h, int64_t v, int64_t i = 1, int64_t occ = 0) {
    return Config{"headwise", {{"THREADS", t}, {"HEADS", h}, {"VEC", v}, {"ITEMS", i}, {"OCC", occ}}};
  };
  const Config c = rc(8, 4, 4);
  EXPECT_EQ(s.canonical_name(rope(16, 32, 8, 128), c), "rmsnorm_rope.bf16.neox.t8.h4.v4.i1.o0");
  EXPECT_EQ(s.canonical_name(rope(16, 32, 8, 128, DType::kF16, "gptj"), rc(8, 4, 4, 2, 1024)),
            "rmsnorm_rope.f16.gptj.t8.h4.v4.i2.o1024");
  EXPECT_EQ(s.compile_spec(rope(16, 32, 8, 128, DType::kBF16, "gptj"), c).name_expressions.at(0),
            "ktune_rmsnorm_rope<128,8,4,4,1,0,true,__nv_bfloat16>");
  const Config wide = rc(32, 4, 4);  // 128 > 64 / 2
  EXPECT_NE(s.rejection(rope(1, 2, 1, 64), wide), std::nullopt);
  EXPECT_EQ(s.rejection(rope(1, 2, 1, 256), wide), std::nullopt);
  EXPECT_NE(s.rejection(rope(1, 2, 1, 128), rc(8, 2, 4)), std::nullopt);   // 16 threads: not whole warps
  EXPECT_NE(s.rejection(rope(1, 2, 1, 128), rc(16, 2, 1)), std::nullopt);  // VEC odd
  EXPECT_NE(s.rejection(rope(1, 2, 1, 128, DType::kF32), rc(8, 4, 8)), std::nullopt);  // 32 bytes
  EXPECT_NE(s.rejection(rope(1, 2, 1, 128), rc(8, 4, 4, 3)).value_or("").find("ITEMS=3"), std::string::npos);
  EXPECT_EQ(s.rejection(rope(1, 2, 1, 128), rc(8, 8, 4, 1, 1152)), std::nullopt);  // 18 blocks of 64
  EXPECT_NE(s.rejection(rope(1, 2, 1, 128), rc(8, 8, 4, 1, 1000)).value_or("").find("OCC=1000"),
            std::string::npos);                                                    // not whole blocks
  EXPECT_NE(s.rejection(rope(1, 2, 1, 128), rc(8, 4, 4, 1, 1152)), std::nullopt);  // 36 blocks of 32
  EXPECT_NE(s.rejection(rope(1, 2, 1, 128), rc(8, 8, 4, 1, 2112)), std::nullopt);  // past 2048 threads
  const LaunchPlan plan = s.launch_plan(rope(10, 32, 8, 128), c);
  EXPECT_EQ(plan.launches[0].dims.grid, (Dim3{100, 1, 1}));  // 10 * 40 heads / 4
  EXPECT_EQ(plan.launches[0].dims.block, (Dim3{32, 1, 1}));
  EXPECT_EQ(s.launch_plan(rope(10, 32, 8, 128), rc(8, 4, 4, 4)).launches[0].dims.grid, (Dim3{25, 1, 1}));
  EXPECT_EQ(plan.tensors[plan.tensor_index("k")].elements, 10 * 8 * 128);
  EXPECT_EQ(plan.tensors[plan.tensor_index("cos_sin")].elements, RmsNormRopeSpec::kMaxPos * 128);
  EXPECT_EQ(plan.launches[0].args.size(), 13u);  // 8 tensors, 5 scalars
  const ReferenceSpec r = s.reference(rope(10, 32, 8, 128));
  EXPECT_EQ(r.compare,
            (std::vector<std::pair<std::string, std::string>>{{"q_out", "q_ref"}, {"k_out", "k_ref"}}));
  EXPECT_EQ(r.plan.launches[0].args.size(), 14u);  // + head_dim
  EXPECT_GT(s.work(rope(10, 32, 8, 128)).min_bytes, 2.0 * 10 * 40 * 128 * 2);
}

TEST(OpsSpec, RopeCpuReferenceUsesIntegerPositions) {
  const RmsNormRopeSpec s;
  const Problem p = rope(2, 1, 1, 64);
  HostTensors in;
  in["q"] = std::vector<double>(128, 0.5);
  in["k"] = std::vector<double>(128, -0.5);
  in["q_weight"] = std::vector<double>(64, 1.0);
  in["k_weight"] = std::vector<double>(64, 1.0);
  in["cos_sin"] = rope_table_f64(3, 64, 10000.0);
  in["positions"] = {0, 4};  // 4 mod 3 = 1
  const HostTensors out = s.cpu_reference(p, in);
  EXPECT_NEAR(out.at("q_out")[0], 1.0, 1e-5);  // position 0: identity; the norm of 0.5s is 1 (eps 1e-6)
  EXPECT_NEAR(out.at("k_out")[64], -(std::cos(1.0) - std::sin(1.0)), 1e-5);  // token 1, j = 0
}

TEST(OpsSpec, SoftmaxModesNamesAndRules) {
  const SoftmaxSpec s;
  const Config one{"rowwise", {{"THREADS", 1024}, {"ROWS", 1}, {"VEC", 8}, {"ONLINE", 0}}};
  const Config online{"rowwise", {{"THREADS", 1024}, {"ROWS", 1}, {"VEC", 8}, {"ONLINE", 1}}};
  EXPECT_EQ(s.canonical_name(smx(4096, 32768), one), "softmax.bf16.t1024.r1.v8.on0");
  EXPECT_EQ(s.canonical_name(smx(4096, 32768, DType::kBF16, "causal"), online),
            "softmax.bf16.causal.t1024.r1.v8.on1");
  EXPECT_EQ(s.compile_spec(smx(4096, 32768), one).name_expressions.at(0),
            "ktune_softmax<1024,1,8,4,0,__nv_bfloat16>");
  EXPECT_EQ(s.compile_spec(smx(1, 262144, DType::kF32, "padding"),
                           Config{"rowwise", {{"THREADS", 1024}, {"ROWS", 1}, {"VEC", 4}, {"ONLINE", 1}}})
                .name_expressions.at(0),
            "ktune_softmax<1024,1,4,0,2,float>");
  EXPECT_NE(s.rejection(smx(1, 262144), one), std::nullopt);  // 256 elements a thread
  EXPECT_EQ(s.rejection(smx(1, 262144), online), std::nullopt);
  expect_bad_input([&] { s.launch_plan(smx(4, 100, DType::kBF16, "alibi"), online); }, "mode");
  EXPECT_EQ(SoftmaxSpec::row_offset(smx(3, 10)), 7);
  EXPECT_EQ(SoftmaxSpec::row_offset(smx(30, 10)), 0);
  const LaunchPlan pad = s.launch_plan(smx(33, 100, DType::kBF16, "padding"), online);
  EXPECT_EQ(pad.tensors[pad.tensor_index("lengths")].elements, 33);
  EXPECT_EQ(pad.launches[0].args[2].tensor, "lengths");
  const LaunchPlan causal = s.launch_plan(smx(3, 100, DType::kBF16, "causal"), online);
  EXPECT_EQ(causal.launches[0].args[6].integer, 97);
  EXPECT_FLOAT_EQ(causal.launches[0].args[5].real, SoftmaxSpec::kScale);
  EXPECT_EQ(causal.launches[0].args[2].kind, ArgSpec::Kind::kNullPointer);
  EXPECT_DOUBLE_EQ(s.work(smx(4096, 32768)).min_bytes, 2.0 * 4096 * 32768 * 2);
  EXPECT_EQ(s.reference(smx(3, 100, DType::kF16, "causal")).compile.name_expressions.at(0),
            "ktune_softmax_reference<__half,1>");
}

TEST(OpsSpec, SoftmaxStagedAndSplitPlans) {
  const SoftmaxSpec s;
  const Config staged{"rowwise", {{"THREADS", 512}, {"ROWS", 1}, {"VEC", 8}, {"ONLINE", 2}, {"SPLIT", 1}}};
  const Config split{"rowwise", {{"THREADS", 256}, {"ROWS", 1}, {"VEC", 8}, {"ONLINE", 1}, {"SPLIT", 8}}};
  EXPECT_EQ(s.canonical_name(smx(4096, 32768), staged), "softmax.bf16.t512.r1.v8.on2.s1");
  EXPECT_EQ(s.canonical_name(smx(64, 262144, DType::kBF16, "padding"), split),
            "softmax.bf16.padding.t256.r1.v8.on1.s8");

  const LaunchPlan st = s.launch_plan(smx(4096, 32767), staged);
  ASSERT_EQ(st.launches.size(), 1u);
  EXPECT_EQ(st.launches[0].name_expression, "ktune_softmax_staged<512,8,0,__nv_bfloat16>");
  EXPECT_EQ(st.launches[0].dims.dynamic_smem_bytes, 65536u);  // 32767 * 2 rounded up to 16
  EXPECT_EQ(st.launches[0].dims.grid, (Dim3{4096, 1, 1}));
  EXPECT_EQ(st.launches[0].dims.block, (Dim3{512, 1, 1}));
  EXPECT_NE(s.rejection(smx(2, 262144), staged), std::nullopt);  // 512 KB of shared memory
  EXPECT_EQ(s.rejection(smx(2, 116160), staged), std::nullopt);  // 227 KB less 128 bytes of scratch
  EXPECT_NE(s.rejection(smx(2, 116161), staged), std::nullopt);
  Config staged_rows = staged;
  staged_rows.set("ROWS", 2);
  staged_rows.set("THREADS", 128);
  EXPECT_NE(s.rejection(smx(8, 4096), staged_rows), std::nullopt);

  const LaunchPlan sp = s.launch_plan(smx(64, 262143, DType::kF16, "causal"), split);
  ASSERT_EQ(sp.launches.size(), 2u);
  const auto& ws = sp.tensors[sp.tensor_index("partials")];
  EXPECT_EQ(ws.role, TensorRole::kWorkspace);
  EXPECT_EQ(ws.elements, 64 * 8 * 2);
  EXPECT_EQ(sp.launches[0].name_expression, "ktune_softmax_partial<256,8,1,__half>");
  EXPECT_EQ(sp.launches[1].name_expression, "ktune_softmax_split_finish<256,8,1,__half>");
  for (const auto& l : sp.launches) {
    EXPECT_EQ(l.dims.grid, (Dim3{8, 64, 1}));
    EXPECT_EQ(l.args.back().integer, 32768);  // ceil(262143 / 8) = 32768, a multiple of VEC
  }
  EXPECT_EQ(sp.launches[0].args[1].tensor, "partials");
  EXPECT_EQ(sp.launches[1].args[2].tensor, "y");
  EXPECT_EQ(sp.launches[1].args.size(), 9u);
  EXPECT_EQ(sp.launches[1].args[7].integer, 262143 - 64);  // causal row offset
  EXPECT_EQ(SoftmaxSpec::segment(1001, split), 128);       // ceil(1001 / 8) = 126 -> multiple of 8
  const CompileSpec c = s.compile_spec(smx(64, 262144), split);
  EXPECT_EQ(c.name_expressions.size(), 2u);

  Config bad = split;
  bad.set("ONLINE", 0);
  EXPECT_NE(s.rejection(smx(64, 1024), bad), std::nullopt);
  bad.set("ONLINE", 2);
  EXPECT_NE(s.rejection(smx(64, 1024), bad), std::nullopt);
  bad = split;
  bad.set("SPLIT", 65);
  EXPECT_NE(s.rejection(smx(64, 262144), bad), std::nullopt);
  EXPECT_NE(s.rejection(smx(70000, 4096), split), std::nullopt);  // rows on grid.y

  // A config without SPLIT (stored before it existed) is accepted, named and planned as before.
  const Config legacy{"rowwise", {{"THREADS", 256}, {"ROWS", 1}, {"VEC", 8}, {"ONLINE", 1}}};
  EXPECT_EQ(s.rejection(smx(4, 1000), legacy), std::nullopt);
  EXPECT_EQ(s.canonical_name(smx(4, 1000), legacy), "softmax.bf16.t256.r1.v8.on1");
  EXPECT_EQ(s.launch_plan(smx(4, 1000), legacy).launches.size(), 1u);
  EXPECT_EQ(s.launch_plan(smx(4, 1000), legacy).launches[0].dims.dynamic_smem_bytes, 0u);
}

TEST(OpsSpec, SwigluModes) {
  const SwigluSpec s;
  const Config c{"elementwise", {{"THREADS", 256}, {"VEC", 8}, {"ITEMS", 2}}};
  EXPECT_EQ(s.canonical_name(swi(16, 14336), c), "swiglu.bf16.fused.t256.v8.e2");
  EXPECT_EQ(s.canonical_name(swi(16, 14336, DType::kBF16, "split"), c), "swiglu.bf16.split.t256.v8.e2");
  const LaunchPlan fused = s.launch_plan(swi(16, 14336), c);
  EXPECT_EQ(fused.tensors[fused.tensor_index("x")].elements, 2 * 16 * 14336);
  EXPECT_EQ(fused.launches[0].dims.grid, (Dim3{4, 16, 1}));  // ceil(14336 / 4096)
  EXPECT_EQ(fused.launches[0].args[1].kind, ArgSpec::Kind::kNullPointer);
  const LaunchPlan split = s.launch_plan(swi(3, 100, DType::kF32, "split"),
                                         Config{"elementwise", {{"THREADS", 64}, {"VEC", 4}, {"ITEMS", 1}}});
  EXPECT_EQ(split.tensors.size(), 3u);
  EXPECT_EQ(split.launches[0].args[1].tensor, "up");
  EXPECT_NE(s.rejection(swi(70000, 64), c), std::nullopt);           // grid.y
  EXPECT_NE(s.rejection(swi(1, 64, DType::kF32), c), std::nullopt);  // f32 VEC 8
  expect_bad_input([&] { s.compile_spec(swi(1, 64, DType::kBF16, "geglu"), c); }, "mode");
  EXPECT_DOUBLE_EQ(s.work(swi(16, 14336)).min_bytes, 3.0 * 16 * 14336 * 2);
  HostTensors in;
  in["x"] = {0, 1, 2, 3};
  const auto out = s.cpu_reference(swi(1, 2), in).at("out");
  EXPECT_EQ(out[0], 0.0);
  EXPECT_NEAR(out[1], 1.0 / (1.0 + std::exp(-1.0)) * 3.0, 1e-15);
}

TEST(OpsSpec, DefaultsServeEveryProblemAndSamplesAreNamedUniquely) {
  struct Case {
    const KernelSpec* spec;
    Problem problem;
  };
  const RmsNormSpec r;
  const RmsNormRopeSpec rp;
  const SoftmaxSpec sm;
  const SwigluSpec sw;
  for (DType t : testing::ops_dtypes()) {
    const std::vector<Case> cases = {
        {&r, rms(1, 1, t)},
        {&r, rms(16384, 8192, t, "residual")},
        {&r, rms(3, 4095, t)},
        {&rp, rope(1, 32, 8, 128, t)},
        {&rp, rope(7, 16, 8, 64, t, "gptj")},
        {&rp, rope(2, 28, 4, 256, t)},
        {&sm, smx(1, 1, t)},
        {&sm, smx(3, 262144, t, "causal")},
        {&sm, smx(4096, 32769, t, "padding")},
        {&sw, swi(1, 1, t)},
        {&sw, swi(16384, 18944, t, "split")},
        {&sw, swi(3, 14335, t)},
    };
    for (const auto& c : cases) {
      EXPECT_EQ(c.spec->rejection(c.problem, c.spec->default_config(c.problem)), std::nullopt)
          << c.spec->kernel() << " " << c.problem.shape_text();
    }
    std::vector<std::string> names;
    for (const auto& c : testing::rmsnorm_samples(t)) names.push_back(r.canonical_name(rms(1, 64, t), c));
    for (const auto& c : testing::softmax_samples(t)) names.push_back(sm.canonical_name(smx(1, 64, t), c));
    std::sort(names.begin(), names.end());
    EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
