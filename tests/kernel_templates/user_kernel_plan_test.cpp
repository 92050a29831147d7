// The candidate a user kernel description makes: a second pass ([[launch]] with its own function
// and argument subset), a workspace (poisoned, the reference's its own twin), a reference config
// of the same template, and `verify = false` (no reference, no checks: timed unverified).

#include <gtest/gtest.h>

#include "kernel_templates/candidate_builder.hpp"
#include "kernel_templates/user_kernel/user_kernel_spec.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace user_kernel_plan_test {  // named: the unity build batches this file with others

const char* const kCu = R"(template <int BLOCK, typename T>
__global__ void partial(const T* x, float* ws, int n) {}
template <int BLOCK, typename T>
__global__ void finish(const float* ws, T* y, int n) {}
)";

/// `verification`: "verify = false" (a root key: it goes before the first table) or a [reference].
std::string description(const std::string& verification) {
  const bool root = verification.rfind("verify", 0) == 0;
  return (root ? verification : "") +
         "dims = [\"n\"]\ndtypes = [\"f32\", \"bf16\"]\n"
         "[[template]]\nname = \"partial\"\n[template.params]\nBLOCK = [64, 128, 256]\n"
         "[[arg]]\nname = \"x\"\nkind = \"input\"\nelements = \"n\"\nscale = 4.0\n"
         "[[arg]]\nname = \"ws\"\nkind = \"workspace\"\ntype = \"f32\"\nelements = \"ceil_div(n, BLOCK)\"\n"
         "[[arg]]\nname = \"y\"\nkind = \"output\"\nelements = \"ceil_div(n, BLOCK)\"\n"
         "[[arg]]\nname = \"n\"\nkind = \"scalar\"\ntype = \"i64\"\nvalue = \"n\"\n"
         "[[launch]]\ngrid = \"ceil_div(n, BLOCK)\"\nblock = \"BLOCK\"\nshared = \"BLOCK * 4\"\nargs = "
         "[\"x\", \"ws\", \"n\"]\n"
         "[[launch]]\nfunction = \"finish\"\ngrid = 1\nblock = \"BLOCK\"\nargs = [\"ws\", \"y\", \"n\"]\n" +
         (root ? "" : verification);
}

harness::CompileResult fake_compile(const CompileSpec& spec, const std::string& cubin) {
  harness::CompileResult r;
  r.cubin = cubin;
  for (const auto& e : spec.name_expressions) r.lowered_names[e] = "_Z_" + e;
  return r;
}

TEST(UserKernelPlan, TwoPassesWithAWorkspaceAndAReferenceConfig) {
  // The reference is the one-launch-per-pass config BLOCK 64 of the same template.
  const UserKernelSpec spec(parse_user_kernel(
      "partial", description("[reference]\nconfig = { BLOCK = 64 }\n"), "p.toml", kCu, "p.cu"));
  const Problem p{{{"n", 1000}}, DType::kBF16, ""};
  const Config c("partial", {{"BLOCK", 256}});
  ASSERT_EQ(spec.rejection(p, c), std::nullopt);
  const CompileSpec cs = spec.compile_spec(p, c);
  EXPECT_EQ(cs.name_expressions,
            (std::vector<std::string>{"partial<256,__nv_bfloat16>", "finish<256,__nv_bfloat16>"}));
  const LaunchPlan plan = spec.launch_plan(p, c);
  ASSERT_EQ(plan.tensors.size(), 3u);
  EXPECT_EQ(plan.tensors[0].fill.scale, 4.0);
  EXPECT_EQ(plan.tensors[1].role, TensorRole::kWorkspace);
  EXPECT_EQ(plan.tensors[1].dtype, DType::kF32);
  EXPECT_EQ(plan.tensors[1].elements, 4);  // ceil(1000 / 256)
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_EQ(plan.launches[0].dims.dynamic_smem_bytes, 1024u);
  EXPECT_EQ(plan.launches[0].args.size(), 3u);
  EXPECT_EQ(plan.launches[0].args[2].kind, ArgSpec::Kind::kI64);
  EXPECT_EQ(plan.launches[1].name_expression, "finish<256,__nv_bfloat16>");
  EXPECT_EQ(plan.launches[1].args[0].tensor, "ws");
  EXPECT_EQ(plan.launches[1].args[1].tensor, "y");

  const ReferenceSpec ref = spec.reference(p);
  EXPECT_EQ(ref.compile.name_expressions.front(), "partial<64,__nv_bfloat16>");
  ASSERT_EQ(ref.plan.launches.size(), 2u);
  EXPECT_EQ(ref.plan.launches[0].args[1].tensor, "ws_ref");  // the reference's own workspace
  EXPECT_EQ(ref.plan.launches[1].args[1].tensor, "y_ref");
  EXPECT_EQ(ref.plan.tensors[2].elements, 16);  // ceil(1000 / 64)
  EXPECT_EQ(ref.compare, (std::vector<std::pair<std::string, std::string>>{{"y", "y_ref"}}));

  // The candidate: inputs random (scaled), outputs and workspace poisoned; a reference of two
  // launches is refused with a clear error rather than half-run.
  EXPECT_THROW(make_candidate_parts(spec, p, c, fake_compile(cs, "C"), fake_compile(ref.compile, "R")),
               Error);
}

TEST(UserKernelPlan, VerifyFalseMakesACandidateWithoutReferenceOrChecks) {
  const UserKernelSpec spec(
      parse_user_kernel("partial", description("verify = false\n"), "p.toml", kCu, "p.cu"));
  EXPECT_FALSE(spec.verifies());
  const Problem p{{{"n", 300}}, DType::kF32, ""};
  const Config c = spec.default_config(p);
  EXPECT_EQ(c, Config("partial", {{"BLOCK", 64}}));  // no seeds: every parameter's first value
  EXPECT_THROW(spec.reference(p), Error);
  const CandidateParts parts =
      make_candidate_parts(spec, p, c, fake_compile(spec.compile_spec(p, c), "C"), harness::CompileResult{});
  EXPECT_FALSE(parts.reference.has_value());
  EXPECT_TRUE(parts.checks.empty());
  ASSERT_EQ(parts.launches.size(), 2u);
  ASSERT_EQ(parts.buffers.size(), 3u);
  EXPECT_EQ(parts.buffers[0].init, measure::BufferSpec::Init::kFill);
  EXPECT_EQ(parts.buffers[1].init, measure::BufferSpec::Init::kPoison);
  EXPECT_EQ(parts.buffers[2].init, measure::BufferSpec::Init::kPoison);
  const measure::CandidateRequest r = make_candidate_request(parts);
  EXPECT_FALSE(r.reference.has_value());
}

TEST(UserKernelPlan, ADtypeALayoutAnotherTemplateOrTooBigABlockIsARejection) {
  const UserKernelSpec spec(
      parse_user_kernel("partial", description("verify = false\n"), "p.toml", kCu, "p.cu"));
  const Config c("partial", {{"BLOCK", 64}});
  EXPECT_EQ(spec.rejection({{{"n", 300}}, DType::kF32, ""}, c), std::nullopt);
  EXPECT_NE(spec.rejection({{{"n", 300}}, DType::kF16, ""}, c), std::nullopt);
  EXPECT_NE(spec.rejection({{{"n", 300}}, DType::kF32, "nt"}, c), std::nullopt);
  EXPECT_NE(spec.rejection({{{"n", 300}}, DType::kF32, ""}, Config("other", {{"BLOCK", 64}})), std::nullopt);
  std::string big = description("verify = false\n");
  big.replace(big.find("block = \"BLOCK\"\nshared"), 22, "block = \"BLOCK * 8\"\nshared");
  const UserKernelSpec wide(parse_user_kernel("partial", big, "p.toml", kCu, "p.cu"));
  EXPECT_EQ(wide.rejection({{{"n", 300}}, DType::kF32, ""}, c), std::nullopt);  // 512 threads
  const auto why = wide.rejection({{{"n", 300}}, DType::kF32, ""}, Config("partial", {{"BLOCK", 256}}));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("a block of 2048 threads"), std::string::npos) << *why;
}

}  // namespace user_kernel_plan_test
}  // namespace ktune::kernel_templates
