// Prebuilt user kernels (docs/byo.md, "Prebuilt cubins"): a description whose candidates are cubins
// compiled ahead of time (a Triton kernel's configs). Its launch takes each cubin's entry, threads
// and shared memory and appends the cubin's scratch pointers (null, or a buffer of bytes x programs);
// configs without a cubin and other architectures are refused, and so are the configs a cubin index's
// [[prune]] leaves out of its key; the compile request carries the file's bytes and the compiler
// hands them back untouched; mistakes name the file, line and field.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "kernel_templates/user_kernel/user_kernel_spec.hpp"
#include "kernel_templates/user_kernel/user_kernels.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

namespace fs = std::filesystem;

/// Two configs of a row kernel, the second with a global scratch of 64 bytes a program.
constexpr const char* kToml = R"(description = "rows"
dims = ["rows", "cols"]
dtypes = ["bf16", "f16"]

[[template]]
name = "rows_kernel"
seeds = [{ BLOCK = 1024, num_warps = 4 }]
[template.params]
BLOCK = [1024]
num_warps = [4, 8, 16]

[[arg]]
name = "x"
kind = "input"
elements = "rows * cols"

[[arg]]
name = "y"
kind = "output"
elements = "rows * cols"

[[arg]]
name = "cols"
kind = "scalar"
value = "cols"

[[launch]]
grid = "rows"

[reference]
config = { BLOCK = 1024, num_warps = 4 }

[prebuilt]
arch = "sm_90"
producer = "triton 3.6.0"

[[prebuilt.cubin]]
config = { BLOCK = 1024, num_warps = 4 }
dtype = "bf16"
file = "a.cubin"
entry = "rows_kernel"
threads = 128
shared = 0
scratch = [0, 0]
name = "triton.3.6.0.BLOCK=1024.w4.s1"

[[prebuilt.cubin]]
config = { BLOCK = 1024, num_warps = 8 }
dtype = "bf16"
file = "b.cubin"
entry = "rows_kernel"
threads = 256
shared = 70000
scratch = [64, 0]
name = "triton.3.6.0.BLOCK=1024.w8.s1"
)";

class Prebuilt : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ktune_prebuilt_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "rows.cubins");
    write(dir_ / "rows.cubins" / "a.cubin",
          "\x7f"
          "ELF-a");
    write(dir_ / "rows.cubins" / "b.cubin",
          "\x7f"
          "ELF-b");
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void write(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }
  UserKernelDescription parse(const std::string& toml) const {
    return parse_user_kernel("rows", toml, dir_ / "rows.toml", "", dir_ / "rows.cu");
  }
  /// The error message of parsing `toml`, or "" when it parses.
  std::string error_of(const std::string& toml) const {
    try {
      parse(toml);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  static std::string replaced(std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  }

  fs::path dir_;
};

const Problem kProblem{{{"rows", 6}, {"cols", 1000}}, DType::kBF16, ""};
const Config kSmall("rows_kernel", {{"BLOCK", 1024}, {"num_warps", 4}});
const Config kBig("rows_kernel", {{"BLOCK", 1024}, {"num_warps", 8}});

TEST_F(Prebuilt, EachConfigLaunchesItsCubinWithItsGeometryAndScratch) {
  const UserKernelSpec spec(parse(kToml));
  ASSERT_TRUE(spec.description().prebuilt.has_value());
  EXPECT_EQ(spec.description().prebuilt->producer, "triton 3.6.0");
  ASSERT_EQ(spec.rejection(kProblem, kBig), std::nullopt);
  EXPECT_EQ(spec.canonical_name(kProblem, kBig), "rows.bf16.triton.3.6.0.BLOCK=1024.w8.s1");

  const CompileSpec cs = spec.compile_spec(kProblem, kBig);
  EXPECT_EQ(cs.prebuilt_cubin, dir_ / "rows.cubins" / "b.cubin");
  EXPECT_EQ(cs.name_expressions, (std::vector<std::string>{"rows_kernel"}));

  const LaunchPlan plan = spec.launch_plan(kProblem, kBig);
  ASSERT_EQ(plan.launches.size(), 1u);
  const KernelLaunch& l = plan.launches[0];
  EXPECT_EQ(l.name_expression, "rows_kernel");
  EXPECT_EQ(l.dims.grid, (Dim3{6, 1, 1}));
  EXPECT_EQ(l.dims.block, (Dim3{256, 1, 1}));
  EXPECT_EQ(l.dims.dynamic_smem_bytes, 70000u);
  // x, y, cols, then the global scratch (a buffer) and the profile scratch (0 bytes: null).
  ASSERT_EQ(l.args.size(), 5u);
  EXPECT_EQ(l.args[2].integer, 1000);
  EXPECT_EQ(l.args[3].kind, ArgSpec::Kind::kTensor);
  EXPECT_EQ(l.args[4].kind, ArgSpec::Kind::kNullPointer);
  const TensorSpec& scratch = plan.tensors.at(static_cast<std::size_t>(plan.tensor_index(l.args[3].tensor)));
  EXPECT_EQ(scratch.role, TensorRole::kWorkspace);
  EXPECT_EQ(scratch.bytes(), 64 * 6);  // 64 bytes a program, one program a row

  const LaunchPlan small = spec.launch_plan(kProblem, kSmall);
  EXPECT_EQ(small.launches[0].dims.block, (Dim3{128, 1, 1}));
  EXPECT_EQ(small.launches[0].args[3].kind, ArgSpec::Kind::kNullPointer);
  EXPECT_EQ(small.tensors.size(), 2u);
}

TEST_F(Prebuilt, ConfigsWithoutACubinAndOtherArchitecturesAreRefused) {
  const UserKernelSpec spec(parse(kToml));
  const auto missing = spec.rejection(kProblem, Config("rows_kernel", {{"BLOCK", 1024}, {"num_warps", 16}}));
  ASSERT_TRUE(missing.has_value());
  EXPECT_NE(missing->find("no prebuilt cubin"), std::string::npos) << *missing;
  // f16 is a dtype of the kernel, but no cubin was built for it.
  EXPECT_TRUE(spec.rejection(Problem{kProblem.dims, DType::kF16, ""}, kSmall).has_value());
  EXPECT_EQ(spec.arch_rejection("sm_90"), std::nullopt);
  EXPECT_EQ(spec.arch_rejection("sm_90a"), std::nullopt);
  const auto other = spec.arch_rejection("sm_80");
  ASSERT_TRUE(other.has_value());
  EXPECT_NE(other->find("sm_90 only"), std::string::npos) << *other;
}

TEST_F(Prebuilt, AReferenceConfigRunsItsOwnCubinIntoTheTwinBuffers) {
  const UserKernelSpec spec(parse(kToml));
  const ReferenceSpec ref = spec.reference(kProblem);
  EXPECT_EQ(ref.compile.prebuilt_cubin, dir_ / "rows.cubins" / "a.cubin");
  ASSERT_EQ(ref.plan.launches.size(), 1u);
  EXPECT_EQ(ref.plan.launches[0].args[1].tensor, "y_ref");
  EXPECT_EQ(ref.plan.launches[0].dims.block, (Dim3{128, 1, 1}));
  EXPECT_EQ(ref.compare, (std::vector<std::pair<std::string, std::string>>{{"y", "y_ref"}}));
}

TEST_F(Prebuilt, TheRequestCarriesTheCubinAndTheCompilerHandsItBack) {
  const UserKernelSpec spec(parse(kToml));
  const harness::CompileRequest r =
      make_compile_request(spec.compile_spec(kProblem, kBig), SourceLibrary::builtin(), "sm_90");
  EXPECT_EQ(r.prebuilt_cubin,
            "\x7f"
            "ELF-b");
  harness::NvrtcCompiler compiler;
  const harness::CompileResult out = compiler.compile(r);
  EXPECT_EQ(out.cubin,
            "\x7f"
            "ELF-b");
  EXPECT_EQ(out.lowered_names.at("rows_kernel"), "rows_kernel");
  EXPECT_EQ(compiler.compiles_done(), 0);
  EXPECT_FALSE(out.cache_key.empty());
  harness::CompileRequest other = r;
  other.prebuilt_cubin =
      "\x7f"
      "ELF-a";
  EXPECT_NE(compiler.cache_key(other), out.cache_key);
}

TEST_F(Prebuilt, MistakesNameTheFileLineAndField) {
  const auto expect = [&](const std::string& toml, const std::string& needle) {
    const std::string e = error_of(toml);
    EXPECT_NE(e.find(needle), std::string::npos) << "expected '" << needle << "' in: " << e;
    EXPECT_NE(e.find("rows.toml:"), std::string::npos) << e;
  };
  expect(replaced(kToml, "file = \"b.cubin\"", "file = \"c.cubin\""), "c.cubin' does not exist");
  expect(replaced(kToml, "file = \"b.cubin\"", "file = \"../b.cubin\""), "prebuilt.cubin 2.file");
  expect(replaced(kToml, "grid = \"rows\"", "grid = \"rows\"\nblock = 128"), "launch 1.block");
  expect(replaced(kToml, "num_warps = 8 }\ndtype", "num_warps = 4 }\ndtype"), "a second cubin");
  expect(replaced(kToml, "num_warps = 8 }\ndtype", "num_warps = 32 }\ndtype"), "num_warps = 32");
  expect(replaced(kToml, "dtype = \"bf16\"\nfile = \"b", "dtype = \"f32\"\nfile = \"b"),
         "f32 is not in dtypes");
  expect(replaced(kToml, "threads = 256", "threads = 2048"), "prebuilt.cubin 2.threads");
  expect(replaced(kToml, "arch = \"sm_90\"", "arch = \"hopper\""), "prebuilt.arch");
  expect(replaced(kToml, "config = { BLOCK = 1024, num_warps = 4 }\n\n[prebuilt]",
                  "config = { BLOCK = 1024, num_warps = 16 }\n\n[prebuilt]"),
         "no [[prebuilt.cubin]] has this config");
  expect(replaced(kToml, "config = { BLOCK = 1024, num_warps = 4 }\n\n[prebuilt]",
                  "function = \"rows_reference\"\ngrid = \"rows\"\nblock = 256\n\n[prebuilt]"),
         "rows.cu, which does not exist");
  // Without [prebuilt], the missing NAME.cu is the error.
  const std::string without_prebuilt(kToml);
  expect(without_prebuilt.substr(0, without_prebuilt.find("[prebuilt]")), "rows.cu does not exist");
}

TEST_F(Prebuilt, CubinsListedInTheFoldersIndexServeAndStayOutOfTheHash) {
  // The same description with its cubin list moved to rows.cubins/index.toml.
  const std::string head(kToml, std::string_view(kToml).find("[[prebuilt.cubin]]"));
  std::string index = std::string(kToml).substr(head.size());
  for (auto at = index.find("[[prebuilt.cubin]]"); at != std::string::npos;
       at = index.find("[[prebuilt.cubin]]"))
    index.replace(at, 18, "[[cubin]]");
  write(dir_ / "rows.cubins" / "index.toml", index);
  const UserKernelSpec spec(parse(head));
  ASSERT_EQ(spec.description().prebuilt->cubins.size(), 2u);
  EXPECT_EQ(spec.compile_spec(kProblem, kBig).prebuilt_cubin, dir_ / "rows.cubins" / "b.cubin");
  EXPECT_EQ(spec.launch_plan(kProblem, kBig).launches[0].dims.block, (Dim3{256, 1, 1}));
  // a cubin added to the index later leaves the kernel's hash (NAME.toml and NAME.cu) as it was
  const auto hash_of = [&] {
    register_user_kernel(parse(head));
    const std::string h = template_source_hash("rows");
    clear_user_kernels();
    return h;
  };
  const std::string before = hash_of();
  ASSERT_FALSE(before.empty());
  write(dir_ / "rows.cubins" / "index.toml", index + R"(
[[cubin]]
config = { BLOCK = 1024, num_warps = 16 }
dtype = "f16"
file = "a.cubin"
entry = "rows_kernel"
threads = 512
)");
  const UserKernelSpec grown(parse(head));
  EXPECT_EQ(grown.description().prebuilt->cubins.size(), 3u);
  EXPECT_EQ(hash_of(), before);
  // mistakes in the index name the index's file and line
  write(dir_ / "rows.cubins" / "index.toml", replaced(index, "threads = 256", "threads = 2048"));
  const std::string e = error_of(head);
  EXPECT_NE(e.find("index.toml:16: cubin 2.threads"), std::string::npos) << e;
  // no index, or an index without a producer to hash, is refused
  fs::remove(dir_ / "rows.cubins" / "index.toml");
  EXPECT_NE(error_of(head).find("index.toml listing them"), std::string::npos) << error_of(head);
  write(dir_ / "rows.cubins" / "index.toml", index);
  EXPECT_NE(error_of(replaced(head, "producer = \"triton 3.6.0\"\n", "")).find("prebuilt.producer"),
            std::string::npos);
}

/// The description's cubin list moved to rows.cubins/index.toml, with a cubin of every config in
/// both dtypes, and `prunes` after it (`root`, keys of the index's root table, before it); returns
/// NAME.toml's text.
std::string with_index(const fs::path& dir, const std::string& prunes, const std::string& root = "") {
  std::string index = root;
  for (const char* dtype : {"bf16", "f16"}) {
    for (const int warps : {4, 8, 16}) {
      index += fmt::format(R"([[cubin]]
config = {{ BLOCK = 1024, num_warps = {} }}
dtype = "{}"
file = "a.cubin"
entry = "rows_kernel"
threads = {}

)",
                           warps, dtype, 32 * warps);
    }
  }
  std::ofstream(dir / "rows.cubins" / "index.toml", std::ios::binary) << index << prunes;
  return std::string(kToml, std::string_view(kToml).find("[[prebuilt.cubin]]"));
}

/// Keeps w8 and w16 of rows=6,cols=1000 bf16 (kProblem); the [[prune]] starts at the index's line 43.
constexpr const char* kPrune = R"([[prune]]
dtype = "bf16"
shape = { rows = 6, cols = 1000 }
keep = [{ BLOCK = 1024, num_warps = 8 },
        { BLOCK = 1024, num_warps = 16 }]
)";

const Config kHuge("rows_kernel", {{"BLOCK", 1024}, {"num_warps", 16}});

TEST_F(Prebuilt, APruneOfTheIndexKeepsItsConfigsForItsDtypeAndShapeOnly) {
  const UserKernelSpec spec(parse(with_index(dir_, kPrune)));
  ASSERT_EQ(spec.description().prebuilt->prunes.size(), 1u);
  const UserPrune& prune = spec.description().prebuilt->prunes[0];
  EXPECT_EQ(prune.dtype, DType::kBF16);
  EXPECT_EQ(prune.shape, (std::vector<std::pair<std::string, int64_t>>{{"rows", 6}, {"cols", 1000}}));
  EXPECT_EQ(prune.keep, (std::vector<Config>{kBig, kHuge}));
  EXPECT_EQ(prune.line, 43u);
  // the pruned key: the tuner's candidates are the kept configs only
  EXPECT_EQ(spec.tuning_rejection(kProblem, kBig), std::nullopt);
  EXPECT_EQ(spec.tuning_rejection(kProblem, kHuge), std::nullopt);
  EXPECT_EQ(spec.tuning_rejection(kProblem, kSmall),
            "prune_configs_by keeps 2 of the configs for rows=6,cols=1000 bf16, not this one");
  // but a pruned config still serves the key: a winner stored before the prune, a config named
  // on the command line, the runtime's default
  EXPECT_EQ(spec.rejection(kProblem, kSmall), std::nullopt);
  EXPECT_EQ(spec.launch_plan(kProblem, kSmall).launches.size(), 1u);
  // another shape or another dtype: every config
  for (const Problem& other :
       {Problem{{{"rows", 6}, {"cols", 1024}}, DType::kBF16, ""},
        Problem{{{"rows", 7}, {"cols", 1000}}, DType::kBF16, ""}, Problem{kProblem.dims, DType::kF16, ""}}) {
    for (const Config& c : {kSmall, kBig, kHuge})
      EXPECT_EQ(spec.tuning_rejection(other, c), std::nullopt)
          << other.shape_text() << " " << c.at("num_warps");
  }
  // the reference config (w4) still verifies the pruned key: pruning makes no config wrong
  EXPECT_EQ(spec.reference(kProblem).compile.prebuilt_cubin, dir_ / "rows.cubins" / "a.cubin");
  // without the [[prune]], the key tunes every config
  const UserKernelSpec unpruned(parse(with_index(dir_, "")));
  EXPECT_TRUE(unpruned.description().prebuilt->prunes.empty());
  EXPECT_EQ(unpruned.tuning_rejection(kProblem, kSmall), std::nullopt);
}

TEST_F(Prebuilt, APrunesMistakesNameTheIndexLineAndField) {
  const auto expect = [&](const std::string& prunes, const std::string& needle) {
    const std::string e = error_of(with_index(dir_, prunes));
    EXPECT_NE(e.find(needle), std::string::npos) << "expected '" << needle << "' in: " << e;
  };
  const auto expect_root = [&](const std::string& root, const std::string& needle) {
    const std::string e = error_of(with_index(dir_, "", root));
    EXPECT_NE(e.find(needle), std::string::npos) << "expected '" << needle << "' in: " << e;
  };
  const std::string prune(kPrune);
  expect_root("prune = 3\n", "index.toml:1: prune: must be an array of tables ([[prune]])");
  expect_root("prune = [3]\n", "index.toml:1: prune 1: must be a table ([[prune]])");
  expect("[prune]\ndtype = \"bf16\"\n", "index.toml:43: prune: must be an array of tables");
  expect(prune + "extra = 1\n",
         "index.toml:48: unknown key 'extra' in prune 1 (allowed: dtype, shape, keep)");
  expect("[[pruned]]\n", "index.toml:43: unknown key 'pruned' in a cubin index (allowed: cubin, prune)");
  expect(replaced(prune, "dtype = \"bf16\"\n", ""), "index.toml:43: prune 1.dtype: missing");
  expect(replaced(prune, "\"bf16\"", "\"f32\""), "index.toml:44: prune 1.dtype: f32 is not in dtypes");
  expect(replaced(prune, "\"bf16\"", "\"b16\""), "index.toml:44: prune 1.dtype: unknown dtype 'b16'");
  expect(replaced(prune, "shape = { rows = 6, cols = 1000 }\n", ""), "index.toml:43: prune 1.shape: missing");
  expect(replaced(prune, "rows = 6, cols = 1000", "rows = 6"),
         "index.toml:45: prune 1.shape: lacks dim 'cols'");
  expect(replaced(prune, "rows = 6,", "rows = 6, m = 2,"),
         "index.toml:45: prune 1.shape: 'm' is not a dim of the description (dims: rows, cols)");
  expect(replaced(prune, "cols = 1000", "cols = 1e3"),
         "index.toml:45: prune 1.shape.cols: must be an integer >= 1");
  expect(replaced(prune, "cols = 1000", "cols = \"1000\""),
         "index.toml:45: prune 1.shape.cols: must be an integer >= 1");
  expect(replaced(prune, "rows = 6", "rows = 0"),
         "index.toml:45: prune 1.shape.rows: must be an integer >= 1");
  expect(prune.substr(0, prune.find("keep")), "index.toml:43: prune 1.keep: missing");
  expect(prune.substr(0, prune.find("keep")) + "keep = []\n",
         "index.toml:46: prune 1.keep: keeps no config: prune_configs_by must keep at least one");
  expect(replaced(prune, "num_warps = 16", "num_warps = 32"),
         "index.toml:47: prune 1.keep[1]: num_warps = 32 is not one of the parameter's values");
  expect(replaced(prune, "BLOCK = 1024, num_warps = 16", "num_warps = 16"),
         "index.toml:47: prune 1.keep[1]: lacks parameter 'BLOCK'");
  expect(replaced(prune, "num_warps = 16", "num_warps = 16, num_stages = 3"),
         "index.toml:47: prune 1.keep[1]: unknown parameter 'num_stages'");
  expect(replaced(prune, "num_warps = 16", "num_warps = 8"),
         "index.toml:47: prune 1.keep[1]: a config kept twice");
  expect(prune + "\n" + prune,
         "index.toml:49: prune 2: a second [[prune]] of rows=6,cols=1000 bf16 (the first is at line 43)");
  // the same shape in the other dtype, or another shape, is another key
  EXPECT_EQ(error_of(with_index(dir_, prune + "\n" + replaced(prune, "\"bf16\"", "\"f16\""))), "");
  EXPECT_EQ(error_of(with_index(dir_, prune + "\n" + replaced(prune, "rows = 6", "rows = 7"))), "");
}

TEST_F(Prebuilt, TheCubinOfTheProblemsSpecializationServesIt) {
  // A compiler that specializes on values (Triton's JIT) gives one config two cubins: `one` compiled
  // as the constant 1 and `cols` as a multiple of 16, and the general one after it.
  std::string toml = replaced(kToml, R"([[launch]])", R"([[arg]]
name = "one"
kind = "scalar"
value = "1"

[[launch]])");
  toml = replaced(toml, R"(file = "a.cubin")", R"(file = "a.cubin"
ones = ["one"]
aligned = ["cols"])");
  toml += R"(
[[prebuilt.cubin]]
config = { BLOCK = 1024, num_warps = 4 }
dtype = "bf16"
file = "b.cubin"
entry = "rows_kernel_general"
threads = 128
scratch = [0, 0]
name = "triton.3.6.0.BLOCK=1024.w4.s1"
)";
  const UserKernelSpec spec(parse(toml));
  const Problem aligned{{{"rows", 6}, {"cols", 1024}}, DType::kBF16, ""};
  const Problem odd{{{"rows", 6}, {"cols", 1000}}, DType::kBF16, ""};
  EXPECT_EQ(spec.compile_spec(aligned, kSmall).prebuilt_cubin, dir_ / "rows.cubins" / "a.cubin");
  EXPECT_EQ(spec.compile_spec(odd, kSmall).prebuilt_cubin, dir_ / "rows.cubins" / "b.cubin");
  // the specialized launch leaves `one` out: x, y, cols, two scratch pointers
  const LaunchPlan fast = spec.launch_plan(aligned, kSmall);
  EXPECT_EQ(fast.launches[0].name_expression, "rows_kernel");
  ASSERT_EQ(fast.launches[0].args.size(), 5u);
  EXPECT_EQ(fast.launches[0].args[2].integer, 1024);
  EXPECT_EQ(fast.launches[0].args[3].kind, ArgSpec::Kind::kNullPointer);
  // the general one passes every arg
  const LaunchPlan general = spec.launch_plan(odd, kSmall);
  EXPECT_EQ(general.launches[0].name_expression, "rows_kernel_general");
  ASSERT_EQ(general.launches[0].args.size(), 6u);
  EXPECT_EQ(general.launches[0].args[3].integer, 1);
  // without a general cubin, a problem no specialization serves is refused, naming the shape
  const UserKernelSpec only(parse(toml.substr(0, toml.rfind("[[prebuilt.cubin]]"))));
  const auto why = only.rejection(odd, kSmall);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("rows=6,cols=1000"), std::string::npos) << *why;
  EXPECT_EQ(only.rejection(aligned, kSmall), std::nullopt);
  // ones and aligned name integer scalar args, once each
  EXPECT_NE(error_of(replaced(toml, R"(aligned = ["cols"])", R"(aligned = ["x"])"))
                .find("'x' is not an integer scalar"),
            std::string::npos);
  EXPECT_NE(error_of(replaced(toml, R"(ones = ["one"])", R"(ones = ["one", "one"])")).find("listed twice"),
            std::string::npos);
}

}  // namespace
}  // namespace ktune::kernel_templates
