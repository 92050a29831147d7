// A user kernel whose reference is saved outputs (`[reference] data`, docs/byo.md): every input is
// read from DATA/DTYPE/SHAPE/NAME.bin, each output's expected values from its own file into an f32
// `_ref` buffer, nothing is compiled or launched for the reference, the worker's request carries the
// file fills; and the mistakes of such a reference are refused with the line and the field.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "kernel_templates/candidate_builder.hpp"
#include "kernel_templates/user_kernel/user_kernel_spec.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace user_kernel_data_reference_test {  // named: the unity build batches this file with others

constexpr const char* kToml = R"toml(description = "y = 2 x"
dims = ["rows", "n"]
dtypes = ["bf16", "f32"]

[[template]]
name = "scale"
[template.params]
BLOCK = [128, 256]

[[arg]]
name = "x"
kind = "input"
elements = "rows * n"

[[arg]]
name = "ids"
kind = "input"
type = "i32"
elements = "rows"

[[arg]]
name = "y"
kind = "output"
elements = "rows * n"

[[arg]]
name = "n"
kind = "scalar"
value = "n"

[[launch]]
grid = "ceil_div(rows * n, BLOCK)"
block = "BLOCK"

[reference]
data = "scale.data"
producer = "torch reference tests:double, source 0123"
tolerance = { y = 1e-2 }
)toml";

constexpr const char* kCu = R"(template <int BLOCK, typename T>
__global__ void scale(const T* x, const int* ids, T* y, int n) {}
)";

UserKernelDescription parse(const std::string& toml) {
  return parse_user_kernel("scale", toml, "dir/scale.toml", kCu, "dir/scale.cu");
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

std::string with(const std::string& from, const std::string& to) {
  std::string t = kToml;
  const auto at = t.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) t.replace(at, from.size(), to);
  return t;
}

/// kToml with a producer but no data (its i32 input then needs a fill).
std::string without_data() {
  std::string t = with("data = \"scale.data\"\n", "");
  const std::string rows = "elements = \"rows\"\n";
  t.replace(t.find(rows), rows.size(), rows + "fill = { min = 0, max = 3 }\n");
  return t;
}

harness::CompileResult fake_compile(const CompileSpec& cs) {
  harness::CompileResult r;
  r.cubin = "C";
  for (const auto& e : cs.name_expressions) r.lowered_names[e] = "_Z" + e;
  return r;
}

TEST(UserKernelDataReference, InputsAndExpectedOutputsAreTheKeysFiles) {
  const UserKernelSpec spec(parse(kToml));
  ASSERT_EQ(spec.description().reference.kind, UserReference::Kind::kData);
  EXPECT_EQ(spec.description().reference.producer, "torch reference tests:double, source 0123");
  EXPECT_TRUE(spec.verifies());
  const std::filesystem::path data = std::filesystem::absolute("dir/scale.data");
  EXPECT_EQ(spec.description().reference.data, data);
  const Problem p{{{"rows", 3}, {"n", 40}}, DType::kBF16, ""};
  const Config c("scale", {{"BLOCK", 128}});
  ASSERT_EQ(spec.rejection(p, c), std::nullopt);  // an i32 input without a fill: its file fills it

  const ReferenceSpec ref = spec.reference(p);
  EXPECT_TRUE(ref.plan.launches.empty());
  EXPECT_TRUE(ref.compile.name_expressions.empty());
  ASSERT_EQ(ref.plan.tensors.size(), 1u);
  const TensorSpec& y_ref = ref.plan.tensors[0];
  EXPECT_EQ(y_ref.name, "y_ref");
  EXPECT_EQ(y_ref.role, TensorRole::kInput);
  EXPECT_EQ(y_ref.dtype, DType::kF32);  // the reference's precision, not the output's bf16
  EXPECT_EQ(y_ref.elements, 120);
  EXPECT_EQ(y_ref.fill.kind, BufferFill::Kind::kFile);
  EXPECT_EQ(y_ref.fill.path, (data / "bf16" / "rows=3,n=40" / "y.bin").string());

  const CandidateParts parts =
      make_candidate_parts(spec, p, c, fake_compile(spec.compile_spec(p, c)), harness::CompileResult{});
  EXPECT_FALSE(parts.reference.has_value());  // nothing runs for the reference
  const measure::CandidateRequest back =
      measure::candidate_request_from_json(measure::to_json(make_candidate_request(parts)));
  ASSERT_EQ(back.buffers.size(), 4u);  // x, ids, y, y_ref
  for (const auto& [i, name] : {std::pair{0, "x"}, std::pair{1, "ids"}, std::pair{3, "y"}}) {
    const measure::BufferSpec& b = back.buffers[static_cast<std::size_t>(i)];
    EXPECT_EQ(b.init, measure::BufferSpec::Init::kFill) << b.name;
    EXPECT_EQ(b.fill.kind, BufferFill::Kind::kFile) << b.name;
    EXPECT_EQ(b.fill.path, (data / "bf16" / "rows=3,n=40" / (std::string(name) + ".bin")).string());
  }
  EXPECT_EQ(back.buffers[1].integer, IntType::kI32);
  EXPECT_EQ(back.buffers[2].init, measure::BufferSpec::Init::kPoison);  // the candidate's own output
  EXPECT_EQ(back.buffers[3].dtype, DType::kF32);
  ASSERT_EQ(back.checks.size(), 1u);
  EXPECT_EQ(back.checks[0].output, "y");
  EXPECT_EQ(back.checks[0].reference, "y_ref");
  EXPECT_DOUBLE_EQ(back.checks[0].rel_l2, 1e-2);

  // another key reads its own files
  const Problem f32{{{"rows", 5}, {"n", 8}}, DType::kF32, ""};
  EXPECT_EQ(spec.reference(f32).plan.tensors[0].fill.path, (data / "f32" / "rows=5,n=8" / "y.bin").string());
}

TEST(UserKernelDataReference, ItsMistakesAreNamed) {
  struct Case {
    std::string toml;
    std::string needle;
  };
  const Case cases[] = {
      {with("data = \"scale.data\"", "data = \"scale.data\"\nfunction = \"f\""),
       "reference: give either 'data' or 'function', not both"},
      {with("data = \"scale.data\"", "data = \"/tmp/scale.data\""),
       "reference.data: must be a folder beside"},
      {with("data = \"scale.data\"", "data = \"../scale.data\""), "reference.data: must be a folder beside"},
      {with("data = \"scale.data\"", "data = 3"), "reference.data: must be a folder beside"},
      {with("producer = \"torch reference tests:double, source 0123\"", "producer = 7"),
       "reference.producer: must be a string"},
      {without_data(), "reference.producer: names what computed"},
      {with("elements = \"rows\"\n", "elements = \"rows\"\nfill = { min = 0, max = 3 }\n"),
       "arg ids.fill: the inputs of a data reference are read from its files"},
  };
  for (const Case& c : cases) {
    const std::string what = error_of(c.toml);
    EXPECT_NE(what.find(c.needle), std::string::npos) << what;
    EXPECT_NE(what.find("dir/scale.toml:"), std::string::npos) << what;
  }
}

}  // namespace user_kernel_data_reference_test
}  // namespace ktune::kernel_templates
