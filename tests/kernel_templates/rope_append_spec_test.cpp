// rope_append's spec without CUDA: modes, names and expressions, rules, launch geometry and the
// argument positions the runtime replaces, the tuned cache geometry (written whole, a permutation
// of blocks), work, the references; and the float64 reference against hand-worked values.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kernel_templates/rope_append/rope_append_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

Problem ra(int64_t tokens, int64_t hq, int64_t hk, int64_t d, int64_t r, std::string mode = "",
           DType dtype = DType::kBF16) {
  return {{{"tokens", tokens}, {"heads_q", hq}, {"heads_kv", hk}, {"head_dim", d}, {"rot_dim", r}},
          dtype,
          std::move(mode)};
}
Config rc(int64_t t, int64_t h, int64_t v, int64_t i = 1) {
  return {"headwise", {{"THREADS", t}, {"HEADS", h}, {"VEC", v}, {"ITEMS", i}}};
}

TEST(RopeAppendSpec, ModesAreStyleNormPagedInCodeOrder) {
  const RopeAppendSpec s;
  const std::vector<std::string> want = {"neox",       "gptj",       "neox+norm",       "gptj+norm",
                                         "neox+paged", "gptj+paged", "neox+norm+paged", "gptj+norm+paged"};
  EXPECT_EQ(s.layouts(), want);
  for (std::size_t code = 0; code < want.size(); ++code) {
    const auto m = RopeAppendSpec::parse_mode(want[code]);
    ASSERT_TRUE(m.has_value()) << want[code];
    EXPECT_EQ(RopeAppendSpec::mode_text(*m), want[code]);
    EXPECT_EQ((m->style == RopeStyle::kGptj ? 1 : 0) + (m->norm ? 2 : 0) + (m->paged ? 4 : 0),
              static_cast<int>(code));
  }
  EXPECT_EQ(RopeAppendSpec::mode_text(*RopeAppendSpec::parse_mode("")), "neox");
  EXPECT_FALSE(RopeAppendSpec::parse_mode("paged+neox").has_value());
  EXPECT_FALSE(RopeAppendSpec::parse_mode("neox+norm+norm").has_value());
  EXPECT_EQ(specs_of("rope_append").size(), 1u);
  EXPECT_FALSE(template_source_hash("rope_append").empty());
  const auto files = kernel_source_files("rope_append");
  EXPECT_NE(std::find(files.begin(), files.end(), "rope_append_reference.cu"), files.end());
}

TEST(RopeAppendSpec, NamesExpressionsAndRules) {
  const RopeAppendSpec s;
  EXPECT_EQ(s.canonical_name(ra(8, 14, 2, 64, 64, "gptj+norm+paged"), rc(8, 4, 4, 2)),
            "rope_append.bf16.gptj_norm_paged.t8.h4.v4.i2");
  EXPECT_EQ(
      s.compile_spec(ra(8, 14, 2, 128, 64, "neox+paged", DType::kF16), rc(8, 4, 4)).name_expressions.at(0),
      "ktune_rope_append<128,64,8,4,4,1,false,false,true,__half>");
  EXPECT_EQ(s.rejection(ra(1, 32, 8, 128, 64), rc(8, 4, 4)), std::nullopt);
  // rot_dim/2 = 32 and the tail 64 must be multiples of THREADS * VEC.
  EXPECT_NE(s.rejection(ra(1, 32, 8, 128, 64), rc(16, 2, 4)).value_or("").find("THREADS*VEC=64"),
            std::string::npos);
  EXPECT_NE(s.rejection(ra(1, 32, 8, 128, 96), rc(8, 4, 4)).value_or("").find("rot_dim/2=48"),
            std::string::npos);
  EXPECT_NE(s.rejection(ra(1, 32, 8, 100, 64), rc(4, 8, 2)).value_or("").find("head_dim"), std::string::npos);
  EXPECT_NE(s.rejection(ra(1, 32, 8, 64, 128), rc(4, 8, 2)).value_or("").find("rot_dim"), std::string::npos);
  EXPECT_NE(s.rejection(ra(1, 32, 8, 1024, 64), rc(4, 8, 2)).value_or("").find("512"), std::string::npos);
  EXPECT_NE(s.rejection(ra(1, 32, 8, 64, 64, "rotate"), rc(4, 8, 2)).value_or("").find("mode"),
            std::string::npos);
  EXPECT_NE(s.rejection(ra(1, 2, 1, 64, 64), rc(4, 8, 3)).value_or("").find("VEC"), std::string::npos);
  EXPECT_NE(s.rejection(ra(1, 2, 1, 64, 64), rc(4, 4, 2)).value_or("").find("THREADS*HEADS=16"),
            std::string::npos);
  EXPECT_NE(s.rejection(ra(1, 2, 1, 64, 64), rc(4, 8, 2, 3)).value_or("").find("ITEMS=3"), std::string::npos);
  EXPECT_NE(s.rejection(ra(1 << 28, 8, 8, 64, 64), rc(4, 8, 2)).value_or("").find("exceeds"),
            std::string::npos);
  EXPECT_THROW(s.compile_spec(ra(1, 2, 1, 64, 64), rc(4, 4, 2)), Error);
}

TEST(RopeAppendSpec, DefaultServesEveryAcceptedHeadShape) {
  const RopeAppendSpec s;
  for (const std::string& mode : s.layouts()) {
    for (int64_t d = 16; d <= 512; d += 16) {
      for (int64_t r = 16; r <= d; r += 16) {
        for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
          const Problem p = ra(3, 5, 1, d, r, mode, t);
          ASSERT_EQ(s.rejection(p, s.default_config(p)), std::nullopt) << mode << " d" << d << " r" << r;
        }
      }
    }
  }
}

TEST(RopeAppendSpec, PlanArgumentsAndTheTunedCacheGeometry) {
  const RopeAppendSpec s;
  const Problem p = ra(10, 14, 2, 64, 64, "neox+norm+paged");
  const LaunchPlan plan = s.launch_plan(p, rc(4, 16, 2, 2));
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].dims.grid, (Dim3{6, 1, 1}));  // 10 * 18 items / 32
  EXPECT_EQ(plan.launches[0].dims.block, (Dim3{64, 1, 1}));
  const auto& args = plan.launches[0].args;
  ASSERT_EQ(args.size(), 20u);  // 11 tensors, 3 dims, 5 geometry, eps
  EXPECT_EQ(args[3].tensor, "q_weight");
  EXPECT_EQ(args[7].tensor, "block_table");
  EXPECT_EQ(args[10].tensor, "v_cache");
  const auto named = [&](std::string_view name) {
    return args.at(*signature_index(RopeAppendSpec::kSignature, name));
  };
  EXPECT_EQ(named("seq_tokens").integer, 1);
  EXPECT_EQ(named("num_blocks").integer, RopeAppendSpec::kTunedNumBlocks);
  EXPECT_EQ(named("max_pos").integer, RopeAppendSpec::kMaxPos);
  EXPECT_EQ(args[19].kind, ArgSpec::Kind::kF32);
  EXPECT_EQ(plan.tensors[plan.tensor_index("k_cache")].elements, 10 * 2 * 64);  // a row a token, whole
  // The block table is a permutation of the tokens' blocks, so every cache row is written once.
  const TensorSpec& table = plan.tensors[plan.tensor_index("block_table")];
  ASSERT_TRUE(table.integer.has_value());
  ASSERT_EQ(table.fill.kind, BufferFill::Kind::kSequence);
  std::set<int64_t> blocks;
  for (int64_t i = 0; i < table.elements; ++i)
    blocks.insert((table.fill.start + i * table.fill.step) % *table.fill.modulo);
  EXPECT_EQ(blocks.size(), 10u);
  EXPECT_EQ(*blocks.rbegin(), 9);
  // The plain contiguous mode passes no weights and no block table.
  const LaunchPlan plain = s.launch_plan(ra(10, 14, 2, 64, 64), rc(4, 16, 2));
  EXPECT_EQ(plain.launches[0].args[3].kind, ArgSpec::Kind::kNullPointer);
  EXPECT_EQ(plain.launches[0].args[7].kind, ArgSpec::Kind::kNullPointer);
  EXPECT_THROW(plain.tensor_index("q_weight"), Error);
  const ReferenceSpec r = s.reference(p);
  EXPECT_EQ(r.compare.size(), 3u);
  EXPECT_EQ(r.plan.launches[0].args.size(), 22u);  // + head_dim, rot_dim
  EXPECT_GT(s.work(p).min_bytes, 2.0 * 10 * 18 * 64 * 2);
  EXPECT_GT(s.work(p).flops, s.work(ra(10, 14, 2, 64, 64, "neox+paged")).flops);  // the norm's
}

// A decode step of one sequence: its paged table holds one block, id 0 (the only index there is),
// and the fills of every tensor the tuner will make are valid (the H200 found this one refused).
TEST(RopeAppendSpec, OneTokenPagedPlanHasValidFills) {
  const RopeAppendSpec s;
  for (const char* mode : {"neox+paged", "gptj+norm+paged", "neox"}) {
    const Problem p = ra(1, 14, 2, 64, 64, mode);
    for (const auto& t : s.launch_plan(p, rc(4, 16, 2)).tensors) {
      if (t.role != TensorRole::kInput) continue;
      EXPECT_EQ(t.fill.invalid_reason(static_cast<uint64_t>(t.elements), t.integer), std::nullopt)
          << mode << " " << t.name;
    }
  }
}

TEST(RopeAppendSpec, CpuReferenceOfTheTunedGeometry) {
  const RopeAppendSpec s;
  const Problem p = ra(2, 1, 1, 32, 16, "neox+paged");
  HostTensors in;
  in["q"] = std::vector<double>(64, 0.5);
  in["k"] = std::vector<double>(64, -0.25);
  in["v"] = std::vector<double>(64);
  for (std::size_t i = 0; i < 64; ++i) in["v"][i] = 0.01 * static_cast<double>(i);
  in["cos_sin"] = rope_table_f64(3, 16, 10000.0);
  in["positions"] = {0, 4};    // 4 mod 3 = 1
  in["block_table"] = {1, 0};  // token 0's rows go to block 1
  const HostTensors out = s.cpu_reference(p, in);
  EXPECT_DOUBLE_EQ(out.at("q_out")[0], 0.5);  // position 0: identity
  // Token 1 (position 1, j = 0): k' = k cos 1 - k sin 1, in block 0.
  EXPECT_NEAR(out.at("k_cache")[0], -0.25 * (std::cos(1.0) - std::sin(1.0)), 1e-12);
  EXPECT_DOUBLE_EQ(out.at("k_cache")[32 + 20], -0.25);      // token 0 in block 1; past rot_dim: as is
  EXPECT_DOUBLE_EQ(out.at("v_cache")[32 + 5], 0.01 * 5);    // token 0's v in block 1
  EXPECT_DOUBLE_EQ(out.at("v_cache")[7], 0.01 * (32 + 7));  // token 1's v in block 0
}

TEST(RopeAppendF64, WritesRowsAtPositionsAndSkipsBlocksOutOfRange) {
  // One q head and one kv head of 16, rot_dim 16, table of 5 positions, GPT-J, with the norm.
  const int64_t d = 16;
  std::vector<double> q(2 * d), k(2 * d), v(2 * d), w(d, 2.0);
  for (int64_t i = 0; i < 2 * d; ++i) {
    q[i] = 1.0;
    k[i] = i % 2 == 0 ? 1.0 : -1.0;
    v[i] = static_cast<double>(i);
  }
  const auto table = rope_table_f64(5, d, 100.0);
  const std::vector<int32_t> positions = {6, 3};    // rows 6 % 4 = 2 and 3 of blocks 6/4 = 1 and 0
  const std::vector<int32_t> block_table = {9, 2};  // logical 0 -> 9 (out of range), logical 1 -> 2
  RopeAppendInputs in;
  in.q = q, in.k = k, in.v = v, in.q_weight = w, in.k_weight = w, in.cos_sin = table;
  in.positions = positions, in.block_table = block_table;
  in.tokens = 2, in.heads_q = 1, in.heads_kv = 1, in.head_dim = d, in.rot_dim = d;
  in.style = RopeStyle::kGptj, in.eps = 0;
  const KvCacheGeometry geometry{2, 4, true, 2, 3};  // both tokens one sequence; blocks of 4, 3 blocks
  std::vector<double> kc(3 * 4 * d, -7), vc(3 * 4 * d, -7);
  const auto q_out = rope_append_f64(in, geometry, kc, vc);
  // q of ones normalises to 2s (weight 2); position 6 mod 5 = 1; pair (0, 1) at angle 0: 2 cos 1 - 2 sin 1.
  EXPECT_NEAR(q_out[0], 2 * std::cos(1.0) - 2 * std::sin(1.0), 1e-12);
  EXPECT_NEAR(q_out[1], 2 * std::cos(1.0) + 2 * std::sin(1.0), 1e-12);
  // Token 0 (position 6): logical block 1 -> block 2, row 2.
  const std::size_t row0 = (2 * 4 + 2) * d;
  EXPECT_DOUBLE_EQ(vc[row0 + 3], 3.0);
  const double c = table[1 * d + 0], sn = table[1 * d + d / 2];
  EXPECT_NEAR(kc[row0], 2 * c + 2 * sn, 1e-12);  // (a, b) = (2, -2): a cos - b sin
  // Token 1 (position 3): logical block 0 -> block 9, out of range: nothing written anywhere else.
  std::size_t written = 0;
  for (double x : vc) written += x != -7 ? 1 : 0;
  EXPECT_EQ(written, static_cast<std::size_t>(d));
  // Sizes are checked.
  std::vector<double> small(d);
  EXPECT_THROW(rope_append_f64(in, geometry, small, small), Error);
}

}  // namespace
}  // namespace ktune::kernel_templates
