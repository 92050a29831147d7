// A user kernel's input fills, integer buffers and per-output bounds (docs/byo.md): the shipped
// gather example (an i32 index tensor) describes them as worked out by hand below, they reach the
// worker's request, and every mistake in them is refused with the file, the line and the field.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kernel_templates/candidate_builder.hpp"
#include "kernel_templates/user_kernel/user_kernel_spec.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace user_kernel_fill_test {  // named: the unity build batches this file with others

const std::filesystem::path kGather =
    std::filesystem::path(KTUNE_TEST_SOURCE_DIR) / "examples" / "byo" / "gather";

std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string& gather_toml() {
  static const std::string text = text_of(kGather / "gather.toml");
  return text;
}
const std::string& gather_cu() {
  static const std::string text = text_of(kGather / "gather.cu");
  return text;
}

/// gather.toml with `from` replaced by `to` (which must occur once).
std::string edited(const std::string& from, const std::string& to) {
  std::string t = gather_toml();
  const auto at = t.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(t.find(from, at + 1), std::string::npos) << from;
  if (at != std::string::npos) t.replace(at, from.size(), to);
  return t;
}

UserKernelDescription parse(const std::string& toml) {
  return parse_user_kernel("gather", toml, "dir/gather.toml", gather_cu(), "dir/gather.cu");
}

std::string error_of(const std::string& toml) {
  try {
    parse(toml);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << toml;
  return {};
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

harness::CompileResult fake_compile(const CompileSpec& cs) {
  harness::CompileResult r;
  r.cubin = "C";
  for (const auto& e : cs.name_expressions) r.lowered_names[e] = "_Z" + e;
  return r;
}

const Config kConfig("gather", {{"THREADS", 64}, {"ROWS", 4}});

TEST(UserKernelFills, GatherDescribesAnI32IndexTensorFilledWithRowNumbers) {
  const UserKernelSpec spec(read_user_kernel(kGather, "gather"));
  const Problem p{{{"vocab", 1000}, {"tokens", 37}, {"hidden", 96}}, DType::kBF16, ""};
  ASSERT_EQ(spec.rejection(p, kConfig), std::nullopt);
  const LaunchPlan plan = spec.launch_plan(p, kConfig);
  ASSERT_EQ(plan.tensors.size(), 3u);
  const TensorSpec& table = plan.tensors[0];
  EXPECT_EQ(table.integer, std::nullopt);
  EXPECT_EQ(table.fill.kind, BufferFill::Kind::kRange);
  EXPECT_EQ(table.fill.min, -2.0);
  EXPECT_EQ(table.fill.max, 3.0);
  EXPECT_EQ(table.bytes(), 1000 * 96 * 2);
  const TensorSpec& ids = plan.tensors[1];
  EXPECT_EQ(ids.name, "ids");
  EXPECT_EQ(ids.integer, IntType::kI32);
  EXPECT_EQ(ids.elements, 37);
  EXPECT_EQ(ids.bytes(), 37 * 4);
  EXPECT_EQ(ids.fill.kind, BufferFill::Kind::kRange);
  EXPECT_EQ(ids.fill.min, 0);
  EXPECT_EQ(ids.fill.max, 999);  // vocab - 1 for this shape
  const KernelLaunch& l = plan.launches.at(0);
  EXPECT_EQ(l.dims.grid, (Dim3{10, 1, 1}));  // ceil(37 / 4)
  EXPECT_EQ(l.dims.block, (Dim3{64, 4, 1}));
  ASSERT_EQ(l.args.size(), 5u);
  EXPECT_EQ(l.args[1].tensor, "ids");
  EXPECT_DOUBLE_EQ(spec.work(p).min_bytes, 2.0 * 37 * 96 * 2 + 4 * 37);
  // The copy is judged exactly: an absolute bound of 0, no relative one.
  const ReferenceSpec ref = spec.reference(p);
  EXPECT_EQ(ref.abs_tolerance.at("y"), 0.0);
  EXPECT_FALSE(ref.rel_tolerance.contains("y"));
}

TEST(UserKernelFills, FillsTypesAndBoundsReachTheWorkersRequest) {
  const UserKernelSpec spec(read_user_kernel(kGather, "gather"));
  const Problem p{{{"vocab", 50}, {"tokens", 8}, {"hidden", 32}}, DType::kF32, ""};
  const CandidateParts parts = make_candidate_parts(
      spec, p, kConfig, fake_compile(spec.compile_spec(p, kConfig)), fake_compile(spec.reference(p).compile));
  const measure::CandidateRequest back =
      measure::candidate_request_from_json(measure::to_json(make_candidate_request(parts)));
  ASSERT_EQ(back.buffers.size(), 4u);  // table, ids, y, y_ref
  EXPECT_EQ(back.buffers[1].name, "ids");
  EXPECT_EQ(back.buffers[1].integer, IntType::kI32);
  EXPECT_EQ(back.buffers[1].fill.kind, BufferFill::Kind::kRange);
  EXPECT_EQ(back.buffers[1].fill.max, 49);
  EXPECT_EQ(back.buffers[1].init, measure::BufferSpec::Init::kFill);
  EXPECT_EQ(back.buffers[3].name, "y_ref");
  EXPECT_EQ(back.buffers[3].init, measure::BufferSpec::Init::kPoison);
  ASSERT_EQ(back.checks.size(), 1u);
  EXPECT_EQ(back.checks[0].abs, 0.0);
  EXPECT_EQ(back.checks[0].rel_l2, 0.0);
}

TEST(UserKernelFills, APatternASequenceAndIntegerOutputs) {
  // The table repeats a pattern; the ids run through the rows with a stride; y is an i64 output.
  std::string t = edited("fill = { min = -2.0, max = 3.0 }", "fill = { pattern = [1.0, -0.5, 2.0] }");
  t.replace(t.find("fill = { min = 0, max = \"vocab - 1\" }"), 37,
            "fill = { sequence = { start = 3, step = 7, modulo = \"vocab\" } }");
  t.replace(t.find("tolerance = { y = { abs = 0 } }"), 31, "");
  t.replace(t.find("kind = \"output\""), 15, "kind = \"output\"\ntype = \"i64\"");
  const UserKernelSpec spec(parse(t));
  const Problem p{{{"vocab", 10}, {"tokens", 5}, {"hidden", 4}}, DType::kF32, ""};
  ASSERT_EQ(spec.rejection(p, kConfig), std::nullopt);
  const LaunchPlan plan = spec.launch_plan(p, kConfig);
  EXPECT_EQ(plan.tensors[0].fill.pattern, (std::vector<double>{1.0, -0.5, 2.0}));
  const BufferFill& ids = plan.tensors[1].fill;
  EXPECT_EQ(ids.kind, BufferFill::Kind::kSequence);
  EXPECT_EQ(ids.start, 3);
  EXPECT_EQ(ids.step, 7);
  EXPECT_EQ(ids.modulo, 10);
  EXPECT_EQ(plan.tensors[2].integer, IntType::kI64);
  EXPECT_EQ(plan.tensors[2].bytes(), 5 * 4 * 8);
  // An integer output without a bound is compared exactly: no bound reaches the check, the worker
  // then uses 0 (measure/candidate.hpp, OutputCheck::abs).
  const CandidateParts parts = make_candidate_parts(
      spec, p, kConfig, fake_compile(spec.compile_spec(p, kConfig)), fake_compile(spec.reference(p).compile));
  ASSERT_EQ(parts.checks.size(), 1u);
  EXPECT_EQ(parts.checks[0].abs, std::nullopt);
  EXPECT_EQ(parts.buffers.back().integer, IntType::kI64);  // y_ref has the output's type
}

TEST(UserKernelFills, TheShortToleranceFormStillMeansARelativeBound) {
  const UserKernelSpec spec(parse(edited("tolerance = { y = { abs = 0 } }", "tolerance = { y = 2e-3 }")));
  const Problem p{{{"vocab", 50}, {"tokens", 8}, {"hidden", 32}}, DType::kF32, ""};
  EXPECT_EQ(spec.reference(p).rel_tolerance.at("y"), 2e-3);
  EXPECT_FALSE(spec.reference(p).abs_tolerance.contains("y"));
  const UserKernelSpec both(parse(edited("{ y = { abs = 0 } }", "{ y = { rel = 1e-2, abs = 1e-3 } }")));
  EXPECT_EQ(both.reference(p).rel_tolerance.at("y"), 1e-2);
  EXPECT_EQ(both.reference(p).abs_tolerance.at("y"), 1e-3);
}

// --- Errors: the file, the line and the field. ------------------------------------------------

TEST(UserKernelFillErrors, ARangeOrPatternOfZerosIsRefused) {
  EXPECT_HAS(error_of(edited("{ min = -2.0, max = 3.0 }", "{ min = 0, max = 0 }")),
             "dir/gather.toml:25: arg 'table'.fill: the range [0, 0] can only produce zeros");
  EXPECT_HAS(error_of(edited("{ min = -2.0, max = 3.0 }", "{ pattern = [0, 0.0] }")),
             "dir/gather.toml:25: arg 'table'.fill: the pattern is all zeros");
  EXPECT_HAS(error_of(edited("{ min = 0, max = \"vocab - 1\" }",
                             "{ sequence = { start = 0, step = 4, modulo = 2 } }")),
             "dir/gather.toml:33: arg 'ids'.fill: the sequence can only produce zeros");
}

TEST(UserKernelFillErrors, AFillThatDependsOnTheShapeIsCheckedForEachShape) {
  // ids = 0 + 2 i mod (vocab - 1): for vocab = 3 every id is 0 mod 2 = 0 (refused); for vocab = 2 the
  // modulo is 1, whose one index 0 is all a table into one row can hold (accepted); for vocab = 1
  // the modulo is 0.
  const UserKernelSpec spec(parse(
      edited("{ min = 0, max = \"vocab - 1\" }", "{ sequence = { step = 2, modulo = \"vocab - 1\" } }")));
  EXPECT_EQ(spec.rejection({{{"vocab", 100}, {"tokens", 8}, {"hidden", 32}}, DType::kF32, ""}, kConfig),
            std::nullopt);
  EXPECT_EQ(spec.rejection({{{"vocab", 2}, {"tokens", 8}, {"hidden", 32}}, DType::kF32, ""}, kConfig),
            std::nullopt);
  const auto zeros =
      spec.rejection({{{"vocab", 3}, {"tokens", 8}, {"hidden", 32}}, DType::kF32, ""}, kConfig);
  ASSERT_TRUE(zeros.has_value());
  EXPECT_HAS(*zeros, "dir/gather.toml:33: arg 'ids'.fill: the sequence can only produce zeros");
  EXPECT_HAS(*zeros, "for vocab=3,tokens=8,hidden=32");
  const auto modulo =
      spec.rejection({{{"vocab", 1}, {"tokens", 8}, {"hidden", 32}}, DType::kF32, ""}, kConfig);
  ASSERT_TRUE(modulo.has_value());
  EXPECT_HAS(*modulo, "the modulo 0 is not positive");
  // The range's top: vocab - 1 = 0 makes [0, 0].
  const UserKernelSpec range(read_user_kernel(kGather, "gather"));
  const auto one_row =
      range.rejection({{{"vocab", 1}, {"tokens", 8}, {"hidden", 32}}, DType::kF32, ""}, kConfig);
  ASSERT_TRUE(one_row.has_value());
  EXPECT_HAS(*one_row, "gather/gather.toml:33: arg 'ids'.fill: the range [0, 0] can only produce zeros");
}

TEST(UserKernelFillErrors, IntegerBuffersNeedAFillOfIntegersTheTypeHolds) {
  EXPECT_HAS(error_of(edited("fill = { min = 0, max = \"vocab - 1\" }\n", "")),
             "dir/gather.toml:27: arg 'ids'.fill: missing: an i32 input needs a fill");
  EXPECT_HAS(error_of(edited("{ min = 0, max = \"vocab - 1\" }", "{ min = 0.5, max = 7 }")),
             "dir/gather.toml:33: arg 'ids'.fill: an i32 range needs integer bounds");
  std::string u8 = edited("type = \"i32\"", "type = \"u8\"");
  u8.replace(u8.find("\"vocab - 1\""), 11, "300");
  EXPECT_HAS(error_of(u8), "dir/gather.toml:33: arg 'ids'.fill: 300 does not fit u8");
  EXPECT_HAS(error_of(edited("{ min = -2.0, max = 3.0 }", "{ sequence = { start = 1 } }")),
             "dir/gather.toml:25: arg 'table'.fill.sequence: a sequence fills an integer buffer");
  EXPECT_HAS(error_of(edited("type = \"i32\"", "type = \"i16\"")),
             "dir/gather.toml:30: arg 'ids'.type: unknown dtype 'i16'");
  EXPECT_HAS(error_of(edited("type = \"i32\"", "type = \"i16\"")), "i32, i64, u8 for integers");
}

TEST(UserKernelFillErrors, AMalformedFillIsNamed) {
  EXPECT_HAS(error_of(edited("{ min = -2.0, max = 3.0 }", "{ min = -2.0 }")),
             "dir/gather.toml:25: arg 'table'.fill: a range needs both min and max");
  EXPECT_HAS(error_of(edited("{ min = -2.0, max = 3.0 }", "{ min = -2.0, max = 3.0, pattern = [1] }")),
             "dir/gather.toml:25: arg 'table'.fill: give exactly one of");
  EXPECT_HAS(error_of(edited("{ min = -2.0, max = 3.0 }", "{ minimum = -2.0 }")),
             "unknown key 'minimum' in arg 'table'.fill");
  EXPECT_HAS(error_of(edited("{ min = -2.0, max = 3.0 }", "{ pattern = [1, \"two\"] }")),
             "dir/gather.toml:25: arg 'table'.fill.pattern: must be a list of numbers");
  EXPECT_HAS(error_of(edited("{ min = 0, max = \"vocab - 1\" }", "{ sequence = { start = 0, stride = 2 } }")),
             "unknown key 'stride' in arg 'ids'.fill.sequence");
  EXPECT_HAS(error_of(edited("{ min = 0, max = \"vocab - 1\" }", "{ min = 0, max = \"vocab - ROWS\" }")),
             "dir/gather.toml:33: arg 'ids'.fill.max: ");
  EXPECT_HAS(error_of(edited("{ min = 0, max = \"vocab - 1\" }", "{ min = 0, max = \"vocab - ROWS\" }")),
             "a fill may use the dimensions only");
  EXPECT_HAS(error_of(edited("{ min = 0, max = \"vocab - 1\" }", "{ min = 0, max = \"vocabs - 1\" }")),
             "'vocabs'");
  // Only an input is filled, and scale belongs to the random fill.
  EXPECT_HAS(error_of(edited("elements = \"tokens * hidden\"\n",
                             "elements = \"tokens * hidden\"\nfill = { min = 1, max = 2 }\n")),
             "dir/gather.toml:39: arg 'y'.fill: only an input is filled");
  EXPECT_HAS(
      error_of(edited("fill = { min = -2.0, max = 3.0 }", "scale = 2.0\nfill = { min = -2.0, max = 3.0 }")),
      "dir/gather.toml:26: arg 'table'.fill: scale belongs to the default random fill");
}

TEST(UserKernelFillErrors, EveryShapeOfAFillHasItsMessage) {
  EXPECT_HAS(error_of(edited("fill = { min = -2.0, max = 3.0 }", "fill = 3")),
             "dir/gather.toml:25: arg 'table'.fill: must be a table: { min = A, max = B }");
  std::string many = "[1";
  for (int i = 0; i < 64; ++i) many += ", 1";
  EXPECT_HAS(error_of(edited("{ min = -2.0, max = 3.0 }", "{ pattern = " + many + "] }")),
             "dir/gather.toml:25: arg 'table'.fill.pattern: must be a list of 1 to 64 numbers");
  EXPECT_HAS(
      error_of(edited("{ min = 0, max = \"vocab - 1\" }", "{ sequence = 5 }")),
      "dir/gather.toml:33: arg 'ids'.fill.sequence: must be a table { start = A, step = B, modulo = C }");
  EXPECT_HAS(error_of(edited("{ min = 0, max = \"vocab - 1\" }", "{ sequence = { start = 0.5 } }")),
             "dir/gather.toml:33: arg 'ids'.fill.sequence: 0.5 is not an integer");
  EXPECT_HAS(error_of(edited("{ min = 0, max = \"vocab - 1\" }", "{ sequence = { modulo = 0 } }")),
             "dir/gather.toml:33: arg 'ids'.fill: the modulo 0 is not positive");
  EXPECT_HAS(error_of(edited("tolerance = { y = { abs = 0 } }", "tolerance = 5")),
             "dir/gather.toml:59: reference.tolerance: must be a table");
}

TEST(UserKernelFillErrors, ToleranceBoundsAreChecked) {
  EXPECT_HAS(error_of(edited("{ y = { abs = 0 } }", "{ y = { abs = -1 } }")),
             "dir/gather.toml:59: reference.tolerance.y.abs: must be a bound on max |out - ref|");
  EXPECT_HAS(error_of(edited("{ y = { abs = 0 } }", "{ y = { rel = 2 } }")),
             "dir/gather.toml:59: reference.tolerance.y.rel: must be a relative error in (0, 1]");
  EXPECT_HAS(error_of(edited("{ y = { abs = 0 } }", "{ y = { absolute = 0 } }")),
             "unknown key 'absolute' in reference.tolerance.y");
  EXPECT_HAS(error_of(edited("{ y = { abs = 0 } }", "{ y = {} }")),
             "reference.tolerance.y: give rel, abs or both");
  // An integer output is compared exactly or within an absolute bound, never relatively.
  std::string t = edited("kind = \"output\"", "kind = \"output\"\ntype = \"i32\"");
  t.replace(t.find("{ y = { abs = 0 } }"), 19, "{ y = 1e-3 }");
  EXPECT_HAS(error_of(t),
             "dir/gather.toml:60: reference.tolerance.y: 'y' is an i32 output: it is compared exactly");
}

}  // namespace user_kernel_fill_test
}  // namespace ktune::kernel_templates
