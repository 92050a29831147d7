// User kernel folders (docs/byo.md): the shipped examples load and describe the launches and
// references worked out by hand below; every mistake a user makes in a description is refused with
// the file, the line and the field; the kernel hash follows every edit of either file.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "kernel_templates/candidate_builder.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "kernel_templates/user_kernel/kernel_source_scan.hpp"
#include "kernel_templates/user_kernel/user_kernels.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(KTUNE_TEST_SOURCE_DIR) / "examples" / "byo";

Problem problem(std::vector<std::pair<std::string, int64_t>> dims, DType dtype = DType::kF32) {
  return Problem{std::move(dims), dtype, ""};
}

TEST(UserKernelExamples, TransposeDescribesItsLaunchAndReference) {
  const UserKernelSpec spec(read_user_kernel(kExamples / "transpose", "transpose"));
  EXPECT_EQ(spec.kernel(), "transpose");
  EXPECT_EQ(spec.variant(), "transpose");
  EXPECT_EQ(spec.dims(), (std::vector<std::string>{"rows", "cols"}));
  EXPECT_EQ(spec.param_names(), (std::vector<std::string>{"TILE", "ROWS"}));
  const Problem p = problem({{"rows", 100}, {"cols", 70}});
  const Config c("transpose", {{"TILE", 32}, {"ROWS", 8}});
  ASSERT_EQ(spec.rejection(p, c), std::nullopt);
  EXPECT_EQ(spec.canonical_name(p, c), "transpose.f32.tile32.rows8");
  EXPECT_EQ(spec.compile_spec(p, c).name_expressions, (std::vector<std::string>{"transpose<32,8,float>"}));
  EXPECT_EQ(spec.compile_spec(problem({{"rows", 4}, {"cols", 4}}, DType::kBF16), c).name_expressions.front(),
            "transpose<32,8,__nv_bfloat16>");

  const LaunchPlan plan = spec.launch_plan(p, c);
  ASSERT_EQ(plan.tensors.size(), 2u);
  EXPECT_EQ(plan.tensors[0].name, "in");
  EXPECT_EQ(plan.tensors[0].role, TensorRole::kInput);
  EXPECT_EQ(plan.tensors[0].elements, 7000);
  EXPECT_EQ(plan.tensors[1].role, TensorRole::kOutput);
  ASSERT_EQ(plan.launches.size(), 1u);
  const KernelLaunch& l = plan.launches[0];
  EXPECT_EQ(l.dims.grid, (Dim3{3, 4, 1}));  // ceil(70 / 32), ceil(100 / 32)
  EXPECT_EQ(l.dims.block, (Dim3{32, 8, 1}));
  ASSERT_EQ(l.args.size(), 4u);
  EXPECT_EQ(l.args[0].tensor, "in");
  EXPECT_EQ(l.args[1].tensor, "out");
  EXPECT_EQ(l.args[2].kind, ArgSpec::Kind::kI32);
  EXPECT_EQ(l.args[2].integer, 100);
  EXPECT_EQ(l.args[3].integer, 70);

  const ReferenceSpec ref = spec.reference(p);
  EXPECT_EQ(ref.compile.name_expressions, (std::vector<std::string>{"transpose_reference<float>"}));
  ASSERT_EQ(ref.plan.launches.size(), 1u);
  EXPECT_EQ(ref.plan.launches[0].dims.grid, (Dim3{28, 1, 1}));  // ceil(7000 / 256)
  EXPECT_EQ(ref.plan.launches[0].args[1].tensor, "out_ref");
  EXPECT_EQ(ref.plan.launches[0].args[0].tensor, "in");
  EXPECT_EQ(ref.compare, (std::vector<std::pair<std::string, std::string>>{{"out", "out_ref"}}));
  EXPECT_DOUBLE_EQ(spec.work(p).min_bytes, 2.0 * 7000 * 4);
  EXPECT_EQ(spec.default_config(p), c);  // the seed
}

TEST(UserKernelExamples, LayerNormPassesEpsAsF32AndGroupsRows) {
  const UserKernelSpec spec(read_user_kernel(kExamples / "layernorm", "layernorm"));
  const Problem p = problem({{"rows", 37}, {"hidden", 1000}}, DType::kF16);
  const Config c("layernorm", {{"THREADS", 64}, {"ROWS", 4}});
  ASSERT_EQ(spec.rejection(p, c), std::nullopt);
  const LaunchPlan plan = spec.launch_plan(p, c);
  ASSERT_EQ(plan.tensors.size(), 4u);
  EXPECT_EQ(plan.tensors[1].elements, 1000);
  EXPECT_EQ(plan.tensors[3].name, "y");
  EXPECT_EQ(plan.tensors[3].dtype, DType::kF16);
  const KernelLaunch& l = plan.launches.at(0);
  EXPECT_EQ(l.dims.grid, (Dim3{10, 1, 1}));  // ceil(37 / 4)
  EXPECT_EQ(l.dims.block, (Dim3{256, 1, 1}));
  ASSERT_EQ(l.args.size(), 7u);
  EXPECT_EQ(l.args[6].kind, ArgSpec::Kind::kF32);
  EXPECT_FLOAT_EQ(l.args[6].real, 1e-5f);
  EXPECT_EQ(spec.compile_spec(p, c).name_expressions.front(), "layernorm<64,4,__half>");
  EXPECT_DOUBLE_EQ(spec.work(p).flops, 8.0 * 37 * 1000);
  // A parameter value outside its list is refused, not compiled.
  EXPECT_NE(spec.rejection(p, Config("layernorm", {{"THREADS", 48}, {"ROWS", 1}})), std::nullopt);
}

// --- Description errors: the file, the line and the field. -----------------------------------

const char* const kCu = R"(template <int BLOCK, typename T>
__global__ void scale(const T* x, T* y, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) y[i] = x[i];
}
template <typename T>
__global__ void scale_ref(const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
)";

std::string toml_with(const std::string& args_elements = "n", const std::string& extra_root = "",
                      const std::string& reference =
                          "[reference]\nfunction = \"scale_ref\"\ngrid = \"ceil_div(n, "
                          "128)\"\nblock = 128\n") {
  return extra_root +
         "dims = [\"n\"]\ndtypes = [\"f32\"]\n"  // lines 1-2 (+ extra)
         "[[template]]\nname = \"scale\"\n[template.params]\nBLOCK = [64, 128]\n"
         "[[arg]]\nname = \"x\"\nkind = \"input\"\nelements = \"" +
         args_elements +
         "\"\n"
         "[[arg]]\nname = \"y\"\nkind = \"output\"\nelements = \"n\"\n"
         "[[arg]]\nname = \"n\"\nkind = \"scalar\"\nvalue = \"n\"\n"
         "[[launch]]\ngrid = \"ceil_div(n, BLOCK)\"\nblock = \"BLOCK\"\n" +
         reference;
}

std::string error_of(const std::string& toml, const std::string& cu = kCu) {
  try {
    parse_user_kernel("scale", toml, "dir/scale.toml", cu, "dir/scale.cu");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << toml;
  return {};
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(UserKernelErrors, TheValidBaseLoads) {
  const auto d = parse_user_kernel("scale", toml_with(), "dir/scale.toml", kCu, "dir/scale.cu");
  EXPECT_EQ(d.args.size(), 3u);
  EXPECT_EQ(d.reference.kind, UserReference::Kind::kKernel);
}

TEST(UserKernelErrors, TomlSyntaxNamesTheLine) {
  const std::string e = error_of("dims = [\"n\"\ndtypes = [\"f32\"]\n");
  EXPECT_HAS(e, "dir/scale.toml:");
  EXPECT_HAS(e, "bad TOML");
}

TEST(UserKernelErrors, UnknownFieldNamesItAndItsLine) {
  EXPECT_HAS(error_of(toml_with("n", "colour = 1\n")), "dir/scale.toml:1: unknown key 'colour'");
  // An unknown key inside an [[arg]] (line 7 is the first [[arg]]'s table).
  std::string t = toml_with();
  t.replace(t.find("kind = \"input\""), 14, "knd = \"input\"");
  EXPECT_HAS(error_of(t), "unknown key 'knd' in an [[arg]]");
}

TEST(UserKernelErrors, UnknownSymbolNamesTheFieldAndTheSymbol) {
  const std::string e = error_of(toml_with("n * m"));
  EXPECT_HAS(e, "dir/scale.toml:10: arg 'x'.elements:");
  EXPECT_HAS(e, "'m'");
}

TEST(UserKernelErrors, TemplateParameterCountMustMatchTheKernel) {
  std::string t = toml_with();
  t.replace(t.find("BLOCK = [64, 128]"), 17, "BLOCK = [64, 128]\nVEC = [1, 2]");
  const std::string e = error_of(t);
  EXPECT_HAS(e, "dir/scale.toml:5: template.params:");
  EXPECT_HAS(e, "scale.cu:1: 'scale' has 2 template parameters; the description gives 3");
}

TEST(UserKernelErrors, ParameterValuesFollowTheSpaceLanguagesRules) {
  // The shipped spaces' reader (core/param_values.hpp): the same refusals in a description.
  const auto with_block = [](const std::string& values) {
    std::string t = toml_with();
    t.replace(t.find("BLOCK = [64, 128]"), 17, "BLOCK = " + values);
    return error_of(t);
  };
  EXPECT_HAS(with_block("{pow2 = [48, 128]}"),
             "template.params.BLOCK: pow2 must be [min, max], powers of two");
  EXPECT_HAS(with_block("[64, 128, 64]"), "template.params.BLOCK lists 64 twice");
  EXPECT_HAS(with_block("{start = 1, stop = 100000000}"), "template.params.BLOCK: range has too many values");
  EXPECT_HAS(with_block("{start = 64, stop = 128, stride = 64}"), "unknown key 'stride'");
  EXPECT_HAS(with_block("{stop = 128}"), "a range needs 'start' and 'stop'");
}

TEST(UserKernelErrors, MissingKernelAndReferenceFunctionsAreNamed) {
  std::string t = toml_with();
  t.replace(t.find("name = \"scale\""), 14, "name = \"scal\"");
  EXPECT_HAS(error_of(t), "template.name: scale.cu has no `template <...> __global__ void scal(...)`");
  std::string r = toml_with();
  r.replace(r.find("\"scale_ref\""), 11, "\"scale_rf\"");
  EXPECT_HAS(error_of(r), "reference.function: scale.cu has no");
}

TEST(UserKernelErrors, ATopLevelKeyWrittenInsideATableIsExplained) {
  // TOML puts a key after [reference] into that table: "verify = false" at the end of the file.
  EXPECT_HAS(error_of(toml_with("n", "", "") + "verify = false\n"),
             "verify: written inside a [[launch]]: a top-level key goes before the first [table]");
}

TEST(UserKernelErrors, AReferenceOrAnExplicitVerifyFalseIsRequired) {
  EXPECT_HAS(error_of(toml_with("n", "", "")), "reference: missing");
  EXPECT_HAS(error_of(toml_with("n", "verify = true\n", "")), "verify: may only be false");
  const auto d = parse_user_kernel("scale", toml_with("n", "verify = false\n", ""), "s.toml", kCu, "s.cu");
  EXPECT_EQ(d.reference.kind, UserReference::Kind::kNone);
}

TEST(UserKernelErrors, ABufferSizeNotPositiveForTheShapeIsARejectionNamingIt) {
  const UserKernelSpec spec(parse_user_kernel("scale", toml_with("n - 100"), "dir/scale.toml", kCu, "s.cu"));
  const Config c("scale", {{"BLOCK", 64}});
  EXPECT_EQ(spec.rejection(problem({{"n", 500}}), c), std::nullopt);
  const auto why = spec.rejection(problem({{"n", 60}}), c);
  ASSERT_TRUE(why.has_value());
  EXPECT_HAS(*why, "dir/scale.toml:10: arg 'x'.elements = 'n - 100' is -40 for n=60");
  EXPECT_THROW(spec.launch_plan(problem({{"n", 60}}), c), Error);
}

TEST(UserKernelErrors, APerOutputToleranceReachesTheWorkersCheck) {
  const std::string with_tol = toml_with() + "tolerance = { y = 2e-3 }\n";
  const UserKernelSpec spec(parse_user_kernel("scale", with_tol, "dir/scale.toml", kCu, "dir/scale.cu"));
  const Problem p = problem({{"n", 1000}});
  const Config c("scale", {{"BLOCK", 128}});
  EXPECT_DOUBLE_EQ(spec.reference(p).rel_tolerance.at("y"), 2e-3);
  const auto fake = [](const CompileSpec& cs) {
    harness::CompileResult r;
    r.cubin = "C";
    for (const auto& e : cs.name_expressions) r.lowered_names[e] = "_Z" + e;
    return r;
  };
  const CandidateParts parts =
      make_candidate_parts(spec, p, c, fake(spec.compile_spec(p, c)), fake(spec.reference(p).compile));
  ASSERT_EQ(parts.checks.size(), 1u);
  EXPECT_DOUBLE_EQ(parts.checks[0].rel_l2, 2e-3);
  // The bound travels to the worker with the request.
  const measure::CandidateRequest back =
      measure::candidate_request_from_json(measure::to_json(make_candidate_request(parts)));
  EXPECT_DOUBLE_EQ(back.checks.at(0).rel_l2, 2e-3);
  // Only an output may have one, and it is a relative error in (0, 1].
  EXPECT_HAS(error_of(toml_with() + "tolerance = { x = 1e-3 }\n"), "'x' is not an output argument");
  EXPECT_HAS(error_of(toml_with() + "tolerance = { y = 0 }\n"),
             "reference.tolerance.y: must be a relative error");
}

TEST(UserKernelErrors, ABuiltInNameIsRefused) {
  auto d = parse_user_kernel("gemm", toml_with(), "dir/gemm.toml", std::string(kCu), "dir/gemm.cu");
  // The template is 'scale' in scale.cu; the name clash is refused before anything else.
  EXPECT_THROW(register_user_kernel(std::move(d)), Error);
}

// --- The registry: catalog, specs, hash. ---------------------------------------------------------

TEST(UserKernelRegistry, ARegisteredKernelIsInTheCatalogAndItsHashFollowsEveryEdit) {
  clear_user_kernels();
  const auto load = [](const std::string& cu, const std::string& toml) {
    register_user_kernel(parse_user_kernel("scale", toml, "dir/scale.toml", cu, "dir/scale.cu"));
  };
  load(kCu, toml_with());
  ASSERT_TRUE(is_known_kernel("scale"));
  EXPECT_EQ(find_kernel("scale")->dims, (std::vector<std::string>{"n"}));
  ASSERT_EQ(specs_of("scale").size(), 1u);
  EXPECT_EQ(&find_spec("scale", "scale"), specs_of("scale").front());
  const std::string h0 = template_source_hash("scale");
  ASSERT_FALSE(h0.empty());
  // NVRTC sees the user's file name, so its log names the user's lines.
  EXPECT_NE(SourceLibrary::from_environment().text("scale.cu").find("#line 1 \"scale.cu\""),
            std::string::npos);

  load(std::string(kCu) + "// an edit\n", toml_with());
  const std::string h_cu = template_source_hash("scale");
  load(kCu, toml_with() + "# an edit\n");
  const std::string h_toml = template_source_hash("scale");
  load(kCu, toml_with());
  EXPECT_NE(h_cu, h0);
  EXPECT_NE(h_toml, h0);
  EXPECT_NE(h_cu, h_toml);
  EXPECT_EQ(template_source_hash("scale"), h0);  // the same files, the same identity
  clear_user_kernels();
  EXPECT_FALSE(is_known_kernel("scale"));
}

TEST(KernelSourceScan, CountsTemplateParametersPastCommentsAndAttributes) {
  const std::string src = R"(// template <int A> __global__ void k(
/* template <int A, int B> __global__ void k( */
template <int A, int B = 2, typename T>
__global__ void __launch_bounds__(256, 2) k(const T* x) {}
template <typename T> __global__ void r(T* y) {}
template <int N> __device__ void d(int* p) {}
)";
  const auto k = find_kernel_template(src, "k");
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->template_params, 3);
  EXPECT_EQ(k->line, 3u);
  ASSERT_TRUE(find_kernel_template(src, "r").has_value());
  EXPECT_EQ(find_kernel_template(src, "r")->template_params, 1);
  EXPECT_FALSE(find_kernel_template(src, "d").has_value());  // not __global__
  EXPECT_FALSE(find_kernel_template(src, "missing").has_value());
}

TEST(KernelSourceScan, NamesTheParametersAndLeavesUnnamedOnesEmpty) {
  const std::string src = R"(template <int N, typename T>
__global__ void __launch_bounds__(N) k(const T* __restrict__ q, T* out, int, const int* __restrict__,
    unsigned int rows, const Pair<int, T> pair /* , int commented */, float scale = 0.5f) {}
template <int N> __global__ void none() {}
)";
  const auto k = find_kernel_template(src, "k");
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->params, (std::vector<std::string>{"q", "out", "", "", "rows", "pair", "scale"}));
  ASSERT_TRUE(find_kernel_template(src, "none").has_value());
  EXPECT_TRUE(find_kernel_template(src, "none")->params.empty());
}

}  // namespace
}  // namespace ktune::kernel_templates
