// decode_attention's spec without CUDA: names, name expressions, rejections (bad configs and bad
// input, before any launch), plans (one launch or split + combine), arguments, work counts,
// references, the default config and the registry.

#include <gtest/gtest.h>

#include <set>

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "decode_attention_samples.hpp"
#include "kernel_templates/decode_attention/decode_attention_mma_cluster_spec.hpp"
#include "kernel_templates/decode_attention/decode_attention_mma_spec.hpp"
#include "kernel_templates/decode_attention/decode_attention_spec.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::decode_problem;

Config cfg(int64_t block_n, int64_t warps, int64_t split_k) {
  return {"splitkv", {{"BLOCK_N", block_n}, {"WARPS", warps}, {"SPLIT_K", split_k}}};
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

TEST(AttnSpec, RegisteredWithItsSources) {
  ASSERT_EQ(specs_of("decode_attention").size(), 3u);
  EXPECT_EQ(&find_spec("decode_attention", "splitkv"), specs_of("decode_attention").front());
  EXPECT_EQ(&find_spec("decode_attention", "mma"), specs_of("decode_attention")[1]);
  EXPECT_EQ(&find_spec("decode_attention", "mma_cluster"), specs_of("decode_attention").back());
  EXPECT_EQ(kernel_source_files("decode_attention"),
            (std::vector<std::string>{"decode_attention.cu", "decode_attention_mma.cu",
                                      "decode_attention_mma_cluster.cu", "decode_attention_reference.cu"}));
  EXPECT_FALSE(template_source_hash("decode_attention").empty());
  EXPECT_NE(template_source_hash("decode_attention"), template_source_hash("softmax"));
}

TEST(AttnSpec, MmaTemplateNamesLaunchAndRules) {
  const DecodeAttentionMmaSpec s;
  const Problem llama = decode_problem(8, 32, 8, 4096, 128);
  const Config c{"mma", {{"KEYS", 32}, {"WARPS", 4}, {"STAGES", 3}, {"SPLIT_K", 16}}};
  EXPECT_EQ(s.canonical_name(llama, c), "decode_attention.bf16.mma.k32.w4.s3.sk16");
  EXPECT_EQ(s.compile_spec(llama, c).source_name, "decode_attention_mma.cu");
  EXPECT_EQ(s.compile_spec(llama, c).name_expressions,
            (std::vector<std::string>{"ktune_decode_attention_mma<128,4,32,4,3,false,__nv_bfloat16>",
                                      "ktune_decode_attention_combine<128,__nv_bfloat16>"}));
  const LaunchPlan plan = s.launch_plan(llama, c);
  ASSERT_EQ(plan.launches.size(), 2u);
  // 4 warps x 3 stages x (K + V) x 32 keys x 128 x 2 bytes; the grid as the splitkv template's.
  EXPECT_EQ(plan.launches[0].dims.dynamic_smem_bytes, 4u * 3 * 2 * 32 * 128 * 2);
  EXPECT_EQ(plan.launches[0].dims.block.x, 128u);
  EXPECT_EQ(plan.launches[0].dims.grid.x, 16u);
  EXPECT_EQ(plan.launches[0].dims.grid.y, 8u);
  EXPECT_EQ(plan.launches[0].dims.grid.z, 8u);
  EXPECT_EQ(plan.launches[1].name_expression, "ktune_decode_attention_combine<128,__nv_bfloat16>");
  auto with = [&](const char* name, int64_t value) {
    Config x = c;
    x.set(name, value);
    return s.rejection(llama, x).value_or("");
  };
  EXPECT_NE(with("KEYS", 48).find("KEYS=48"), std::string::npos);
  EXPECT_NE(with("STAGES", 1).find("STAGES=1"), std::string::npos);
  EXPECT_NE(with("WARPS", 3).find("WARPS=3"), std::string::npos);
  EXPECT_NE(with("STAGES", 4).find("shared memory"), std::string::npos);  // 256 KiB
  EXPECT_TRUE(s.arch_rejection("sm_75").has_value());
  EXPECT_FALSE(s.arch_rejection("sm_80").has_value());
  EXPECT_EQ(s.rejection(llama, s.default_config(llama)), std::nullopt);
}

TEST(AttnSpec, ClusterTemplateIsOneLaunchWithoutWorkspace) {
  const DecodeAttentionMmaClusterSpec s;
  const Problem one = decode_problem(1, 32, 8, 8192, 128);
  const Config c{"mma_cluster", {{"KEYS", 16}, {"WARPS", 8}, {"STAGES", 3}, {"SPLIT_K", 8}}};
  EXPECT_EQ(s.canonical_name(one, c), "decode_attention.bf16.mma_cluster.k16.w8.s3.sk8");
  EXPECT_EQ(s.compile_spec(one, c).source_name, "decode_attention_mma_cluster.cu");
  EXPECT_EQ(
      s.compile_spec(one, c).name_expressions,
      (std::vector<std::string>{"ktune_decode_attention_mma_cluster<128,4,16,8,3,8,false,__nv_bfloat16>"}));
  const LaunchPlan plan = s.launch_plan(one, c);
  ASSERT_EQ(plan.launches.size(), 1u);
  for (const TensorSpec& t : plan.tensors) EXPECT_NE(t.role, TensorRole::kWorkspace) << t.name;
  EXPECT_EQ(plan.launches[0].dims.grid.x, 8u);
  EXPECT_EQ(plan.launches[0].dims.grid.y, 8u);
  EXPECT_EQ(plan.launches[0].dims.dynamic_smem_bytes, 8u * 3 * 2 * 16 * 128 * 2);
  // q, k, v, o written by the main kernel, no workspace, context_lens, heads_q, heads_kv, seq, seq_max,
  // num_splits 8, scale, then the paged geometry (null table, zeros).
  ASSERT_EQ(plan.launches[0].args.size(), 16u);
  EXPECT_EQ(plan.launches[0].args[*signature_index(DecodeAttentionSpec::kSignature, "block_table")].kind,
            ArgSpec::Kind::kNullPointer);
  EXPECT_EQ(plan.launches[0].args[3].tensor, "o");
  EXPECT_EQ(plan.launches[0].args[4].kind, ArgSpec::Kind::kNullPointer);
  EXPECT_EQ(plan.launches[0].args[10].integer, 8);
  auto with_split = [&](int64_t split) {
    Config x = c;
    x.set("SPLIT_K", split);
    return s.rejection(one, x).value_or("");
  };
  EXPECT_NE(with_split(1).find("SPLIT_K=1 is outside [2, 16]"), std::string::npos);
  EXPECT_NE(with_split(32).find("SPLIT_K=32"), std::string::npos);
  EXPECT_EQ(with_split(3), "");
  EXPECT_EQ(with_split(16), "");
  EXPECT_TRUE(s.arch_rejection("sm_80").has_value());
  EXPECT_FALSE(s.arch_rejection("sm_90").has_value());
  EXPECT_EQ(s.rejection(one, s.default_config(one)), std::nullopt);
}

TEST(AttnSpec, NamesAndExpressions) {
  const DecodeAttentionSpec s;
  const Problem llama = decode_problem(8, 32, 8, 4096, 128);
  EXPECT_EQ(s.canonical_name(llama, cfg(32, 4, 16)), "decode_attention.bf16.n32.w4.sk16");
  const CompileSpec c = s.compile_spec(llama, cfg(32, 4, 16));
  EXPECT_EQ(c.source_name, "decode_attention.cu");
  EXPECT_EQ(c.name_expressions,
            (std::vector<std::string>{"ktune_decode_attention<128,4,32,4,__nv_bfloat16>",
                                      "ktune_decode_attention_combine<128,__nv_bfloat16>"}));
  // One cubin for every SPLIT_K, batch and seq.
  EXPECT_EQ(s.compile_spec(decode_problem(1, 32, 8, 77, 128), cfg(32, 4, 1)).name_expressions,
            c.name_expressions);
  // G: the group when <= 8, else its largest divisor <= 8.
  EXPECT_EQ(DecodeAttentionSpec::heads_per_block(decode_problem(1, 28, 4, 9, 128)), 7);
  EXPECT_EQ(DecodeAttentionSpec::heads_per_block(decode_problem(1, 8, 8, 9, 128)), 1);
  EXPECT_EQ(DecodeAttentionSpec::heads_per_block(decode_problem(1, 16, 1, 9, 128)), 8);
  EXPECT_EQ(DecodeAttentionSpec::heads_per_block(decode_problem(1, 12, 1, 9, 128)), 6);
  EXPECT_EQ(DecodeAttentionSpec::heads_per_block(decode_problem(1, 11, 1, 9, 128)), 1);
  EXPECT_EQ(DecodeAttentionSpec::unroll(llama, cfg(32, 4, 1)), 4);
  EXPECT_EQ(DecodeAttentionSpec::unroll(decode_problem(1, 32, 8, 9, 64), cfg(32, 4, 1)), 2);
}

TEST(AttnSpec, BadInputIsRefusedBeforeAnyLaunch) {
  const DecodeAttentionSpec s;
  const Config c = cfg(32, 4, 8);
  expect_bad_input([&] { s.launch_plan(decode_problem(1, 32, 8, 4096, 96), c); },
                   "head_dim 64 and 128, not 96");
  expect_bad_input([&] { s.compile_spec(decode_problem(1, 30, 8, 4096, 128), c); },
                   "heads_q=30 is not a multiple of heads_kv=8");
  Problem f16 = decode_problem(1, 32, 8, 4096, 128);
  f16.dtype = DType::kF16;
  expect_bad_input([&] { s.launch_plan(f16, c); }, "bf16 only, not f16");
  Problem masked = decode_problem(1, 32, 8, 4096, 128);
  masked.layout = "causal";
  expect_bad_input([&] { s.reference(masked); }, "no mode 'causal'");
  expect_bad_input([&] { s.launch_plan(decode_problem(1, 32, 8, 0, 128), c); }, "seq=0");
  expect_bad_input([&] { s.launch_plan({{{"batch", 1}, {"heads_q", 8}}, DType::kBF16, ""}, c); }, "heads_kv");
  expect_bad_input([&] { s.launch_plan(decode_problem(70000, 32, 8, 64, 128), c); }, "grid z");
  // A context longer than the cache.
  const Problem p = decode_problem(2, 32, 8, 4096, 128);
  expect_bad_input(
      [&] {
        s.launch_plan(p, c, {4000, false, 0.0f});
      },
      "seq=4096 exceeds the KV cache capacity seq_max=4000");
  expect_bad_input([&] { s.reference(p, {4000, false, 0.0f}); }, "exceeds the KV cache");
  expect_bad_input([&] { s.launch_plan(p, c, {8192, false, std::nanf("")}); }, "not finite");
  EXPECT_NO_THROW(s.launch_plan(p, c, {4096, true, 0.1f}));
}

TEST(AttnSpec, ConfigRules) {
  const DecodeAttentionSpec s;
  const Problem d128 = decode_problem(1, 32, 8, 4096, 128);  // G 4, 2 keys a warp load
  const Problem d64 = decode_problem(1, 32, 8, 4096, 64);    // G 4, 4 keys a warp load
  const Problem g8 = decode_problem(1, 64, 8, 4096, 128);
  EXPECT_EQ(s.rejection(d128, cfg(64, 4, 1)), std::nullopt);   // U 8
  EXPECT_EQ(s.rejection(d64, cfg(16, 4, 1)), std::nullopt);    // U 1
  EXPECT_NE(s.rejection(d64, cfg(8, 4, 1)), std::nullopt);     // less than one load a lane
  EXPECT_NE(s.rejection(d128, cfg(128, 4, 1)), std::nullopt);  // U 16
  EXPECT_EQ(s.rejection(d128, cfg(24, 4, 1)), std::nullopt);   // U 3
  EXPECT_NE(s.rejection(d128, cfg(20, 4, 1)), std::nullopt);   // not a multiple of 8 keys
  EXPECT_NE(s.rejection(d128, cfg(32, 3, 1)), std::nullopt);   // WARPS 3
  EXPECT_NE(s.rejection(d128, cfg(32, 4, 0)), std::nullopt);
  EXPECT_NE(s.rejection(d128, cfg(32, 4, 1025)), std::nullopt);
  EXPECT_EQ(s.rejection(g8, cfg(32, 4, 1)), std::nullopt);  // U 4 x G 8 = 32 scores
  const auto why = s.rejection(g8, cfg(64, 4, 1));          // 64 scores a lane
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("64 scores"), std::string::npos) << *why;
  EXPECT_NE(s.rejection(d128, {"tiled", {{"BLOCK_N", 32}, {"WARPS", 4}, {"SPLIT_K", 1}}}), std::nullopt);
  EXPECT_NE(s.rejection(d128, {"splitkv", {{"BLOCK_N", 32}, {"WARPS", 4}}}), std::nullopt);
}

TEST(AttnSpec, PlanWithoutSplitIsOneLaunch) {
  const DecodeAttentionSpec s;
  const Problem p = decode_problem(3, 32, 8, 1000, 128);
  const LaunchPlan plan = s.launch_plan(p, cfg(32, 4, 1));
  ASSERT_EQ(plan.launches.size(), 1u);
  std::vector<std::string> names;
  for (const auto& t : plan.tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"q", "k", "v", "o"}));
  EXPECT_EQ(plan.tensors[1].elements, 3 * 8 * 1000 * 128);
  EXPECT_EQ(plan.tensors[3].role, TensorRole::kOutput);
  const KernelLaunch& l = plan.launches[0];
  EXPECT_EQ(l.dims.grid, (Dim3{1, 8, 3}));
  EXPECT_EQ(l.dims.block, (Dim3{128, 1, 1}));
  ASSERT_EQ(l.args.size(), 16u);
  EXPECT_EQ(l.args[3].tensor, "o");
  EXPECT_EQ(l.args[4].kind, ArgSpec::Kind::kNullPointer);  // no workspace
  EXPECT_EQ(l.args[5].kind, ArgSpec::Kind::kNullPointer);  // uniform context
  EXPECT_EQ(l.args[8].integer, 1000);                      // seq
  EXPECT_EQ(l.args[9].integer, 1000);                      // seq_max = seq
  EXPECT_EQ(l.args[10].integer, 1);                        // num_splits
  EXPECT_FLOAT_EQ(l.args[11].real, 1.0f / std::sqrt(128.0f));
}

TEST(AttnSpec, SplitPlanAddsWorkspaceAndCombine) {
  const DecodeAttentionSpec s;
  const Problem p = decode_problem(3, 32, 8, 1000, 64);
  const LaunchPlan plan = s.launch_plan(p, cfg(32, 4, 6), {1500, true, 0.25f});
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_EQ(plan.tensors[1].elements, 3 * 8 * 1500 * 64);  // the cache, not the context
  EXPECT_EQ(plan.tensor_index("context_lens"), 3);
  const TensorSpec& ws = plan.tensors[static_cast<std::size_t>(plan.tensor_index("workspace"))];
  EXPECT_EQ(ws.role, TensorRole::kWorkspace);
  EXPECT_EQ(ws.dtype, DType::kF32);
  EXPECT_EQ(ws.elements, 3 * 32 * 6 * (64 + 2));
  const KernelLaunch& main = plan.launches[0];
  EXPECT_EQ(main.dims.grid, (Dim3{6, 8, 3}));
  EXPECT_EQ(main.args[3].kind, ArgSpec::Kind::kNullPointer);
  EXPECT_EQ(main.args[4].tensor, "workspace");
  EXPECT_EQ(main.args[5].tensor, "context_lens");
  EXPECT_EQ(main.args[9].integer, 1500);
  EXPECT_EQ(main.args[10].integer, 6);
  EXPECT_FLOAT_EQ(main.args[11].real, 0.25f);
  const KernelLaunch& combine = plan.launches[1];
  EXPECT_EQ(combine.name_expression, "ktune_decode_attention_combine<64,__nv_bfloat16>");
  EXPECT_EQ(combine.dims.grid, (Dim3{24, 1, 1}));  // 96 rows, 4 a block
  EXPECT_EQ(combine.dims.block, (Dim3{128, 1, 1}));
  ASSERT_EQ(combine.args.size(), 4u);
  EXPECT_EQ(combine.args[0].tensor, "workspace");
  EXPECT_EQ(combine.args[1].tensor, "o");
  EXPECT_EQ(combine.args[2].integer, 96);
  EXPECT_EQ(combine.args[3].integer, 6);
}

TEST(AttnSpec, WorkAlignmentAndReference) {
  const DecodeAttentionSpec s;
  const Problem p = decode_problem(8, 32, 8, 4096, 128);
  const WorkCounts w = s.work(p);
  EXPECT_DOUBLE_EQ(w.flops, 4.0 * 8 * 32 * 4096 * 128);
  EXPECT_DOUBLE_EQ(w.min_bytes, 2.0 * 2 * 8 * 8 * 4096 * 128 + 2.0 * 2 * 8 * 32 * 128);
  const auto rules = s.alignment(p, cfg(32, 4, 1));
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_TRUE(rules[0].required);
  EXPECT_EQ(rules[0].bytes, 16);
  const ReferenceSpec r = s.reference(p, {5000, true, 0.0f});
  EXPECT_EQ(r.compile.name_expressions.at(0), "ktune_decode_attention_reference<128,__nv_bfloat16>");
  EXPECT_EQ(r.compare, (std::vector<std::pair<std::string, std::string>>{{"o", "o_ref"}}));
  EXPECT_EQ(r.plan.launches.at(0).dims.grid, (Dim3{32, 8, 1}));
  EXPECT_EQ(r.plan.tensors.at(static_cast<std::size_t>(r.plan.tensor_index("scores_ref"))).elements,
            8 * 32 * 4096);
  EXPECT_EQ(r.plan.launches.at(0).args.size(), 15u);
  EXPECT_EQ(r.plan.launches.at(0).args[5].tensor, "context_lens");
  EXPECT_EQ(r.plan.launches.at(0).args[9].integer, 5000);
}

TEST(AttnSpec, CpuReferenceFollowsTheCall) {
  const DecodeAttentionSpec s;
  const Problem p = decode_problem(1, 2, 1, 1, 64);
  HostTensors in;
  in["q"].assign(128, 0.5);
  in["k"].assign(2 * 64, 0.25);
  in["v"].assign(2 * 64, 0.75);  // key 0 (the only one in the context) and key 1 of a cache of 2
  in["v"][64] = -9;
  const HostTensors out = s.cpu_reference(p, in, {2, false, 0.0f});
  EXPECT_EQ(out.at("o"), std::vector<double>(128, 0.75));
  in["context_lens"] = {0};
  EXPECT_EQ(s.cpu_reference(p, in, {2, true, 0.0f}).at("o"), std::vector<double>(128, 0.0));
  in.erase("q");
  expect_bad_input([&] { s.cpu_reference(p, in); }, "needs input 'q'");
}

TEST(AttnSpec, DefaultServesEveryProblem) {
  const DecodeAttentionSpec s;
  for (int64_t d : {64, 128}) {
    for (auto [hq, hkv] : {std::pair<int64_t, int64_t>{32, 8}, {8, 8}, {28, 4}, {64, 8}, {16, 1}, {14, 2}}) {
      for (int64_t b : {1, 3, 32}) {
        for (int64_t seq : {1, 77, 4096, 131072}) {
          const Problem p = decode_problem(b, hq, hkv, seq, d);
          const Config c = s.default_config(p);
          EXPECT_EQ(s.rejection(p, c), std::nullopt) << p.shape_text();
        }
      }
    }
  }
  // B 1 with 8 groups: ~264 / 8 = 33 splits; a short context keeps one split.
  EXPECT_EQ(s.default_config(decode_problem(1, 32, 8, 131072, 128)).at("SPLIT_K"), 33);
  EXPECT_EQ(s.default_config(decode_problem(1, 32, 8, 300, 128)).at("SPLIT_K"), 1);
  EXPECT_EQ(s.default_config(decode_problem(32, 32, 8, 131072, 128)).at("SPLIT_K"), 2);
}

// The paged mode: the tensor-core templates only; the tuned plan's cache is blocks of 16 keys in a
// permutation of the blocks; a call's geometry is checked; names and expressions carry it.
TEST(AttnSpec, PagedModeIsTheTensorCoreTemplatesWithItsGeometry) {
  const Problem p{{{"batch", 3}, {"heads_q", 32}, {"heads_kv", 8}, {"seq", 1000}, {"head_dim", 128}},
                  DType::kBF16,
                  "paged"};
  const DecodeAttentionMmaSpec mma;
  const DecodeAttentionSpec& split =
      dynamic_cast<const DecodeAttentionSpec&>(find_spec("decode_attention", "splitkv"));
  EXPECT_EQ(mma.layouts(), (std::vector<std::string>{"", "paged"}));
  EXPECT_NE(split.rejection(p, split.default_config(p)).value_or("").find("contiguous"), std::string::npos);
  const Config c = mma.default_config(p);
  ASSERT_EQ(mma.rejection(p, c), std::nullopt);
  EXPECT_EQ(mma.canonical_name(p, c).rfind("decode_attention.bf16.paged.mma.", 0), 0u)
      << mma.canonical_name(p, c);
  EXPECT_EQ(mma.compile_spec(p, c).name_expressions.at(0),
            "ktune_decode_attention_mma<128,4,16,4,3,true,__nv_bfloat16>");
  const LaunchPlan plan = mma.launch_plan(p, c);
  const auto& args = plan.launches[0].args;
  ASSERT_EQ(args.size(), 16u);
  const auto named = [&](std::string_view name) {
    return args.at(*signature_index(DecodeAttentionSpec::kSignature, name));
  };
  EXPECT_EQ(named("block_table").tensor, "block_table");
  EXPECT_EQ(named("block_size").integer, 16);
  EXPECT_EQ(named("max_blocks").integer, 63);      // ceil(1000 / 16)
  EXPECT_EQ(named("num_blocks").integer, 3 * 63);  // the blocks
  EXPECT_EQ(plan.tensors[1].elements, 3 * 63 * 8 * 16 * 128);
  const TensorSpec& table = plan.tensors[static_cast<std::size_t>(plan.tensor_index("block_table"))];
  ASSERT_EQ(table.elements, 3 * 63);
  std::set<int64_t> ids;
  for (int64_t i = 0; i < table.elements; ++i)
    ids.insert((table.fill.start + i * table.fill.step) % *table.fill.modulo);
  EXPECT_EQ(ids.size(), 3u * 63);  // a permutation: no two sequences share a block
  // A call's geometry: block sizes that are multiples of 16 and tables that hold the context.
  EXPECT_EQ(mma.call_rejection(p, {.block_size = 32, .max_blocks = 32, .num_blocks = 96}), std::nullopt);
  EXPECT_NE(
      mma.call_rejection(p, {.block_size = 24, .max_blocks = 64, .num_blocks = 9}).value_or("").find("16"),
      std::string::npos);
  EXPECT_NE(mma.call_rejection(p, {.block_size = 16, .max_blocks = 62, .num_blocks = 9})
                .value_or("")
                .find("seq=1000"),
            std::string::npos);
  const ReferenceSpec r = mma.reference(p);
  EXPECT_EQ(r.plan.launches.at(0).args.at(11).tensor, "block_table");
  // One sequence of at most 16 keys: one block, id 0, and still valid fills to tune with.
  const Problem one{
      {{"batch", 1}, {"heads_q", 8}, {"heads_kv", 2}, {"seq", 9}, {"head_dim", 64}}, DType::kBF16, "paged"};
  for (const auto& t : mma.launch_plan(one, mma.default_config(one)).tensors) {
    if (t.role == TensorRole::kInput)
      EXPECT_EQ(t.fill.invalid_reason(static_cast<uint64_t>(t.elements), t.integer), std::nullopt) << t.name;
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
