// Every kind of bad space file is ktune::Error(kBadInput) naming the file, the line and the bad part.
#include <gtest/gtest.h>

#include "ktune/error.hpp"
#include "test_util.hpp"
#include "tuner/space/config_space.hpp"

namespace ktune::tuner {
namespace {

using test::expect_bad_input;

/// A valid space whose line 9 is `line9` (a parameter line) and line 12 `line12` (a constraint line).
std::string space_with(const std::string& line9, const std::string& line12) {
  return "kernel = \"toy\"\n"         // 1
         "dims = [\"m\"]\n"           // 2
         "[[template]]\n"             // 3
         "name = \"t\"\n"             // 4
         "pattern = \"a{A}.b{B}\"\n"  // 5
         "\n"                         // 6
         "[template.params]\n"        // 7
         "A = [1, 2, 4]\n"            // 8
         + line9 +
         "\n"                        // 9
         "\n"                        // 10
         "[template.constraints]\n"  // 11
         + line12 + "\n";            // 12
}

TEST(ConfigSpaceErrors, ValidBaseParses) {
  const auto s = ConfigSpace::parse(space_with("B = [3, 5]", "fits = \"A * B <= m\""), "base.toml");
  EXPECT_EQ(s.size(), 6u);
}

TEST(ConfigSpaceErrors, BadTomlNamesFileAndLine) {
  test::TempFile f("broken.toml", space_with("B = [3, 5", "fits = \"A <= m\""));
  expect_bad_input([&] { ConfigSpace::load(f.path()); }, {"broken.toml:", "bad TOML"});
  try {
    ConfigSpace::load(f.path());
  } catch (const Error& e) {
    EXPECT_NE(e.where().find("broken.toml:"), std::string::npos) << e.where();
  }
}

TEST(ConfigSpaceErrors, UnknownParameterInConstraint) {
  test::TempFile f("unknown.toml", space_with("B = [3, 5]", "fits = \"A * BLOCK_Q <= m\""));
  expect_bad_input([&] { ConfigSpace::load(f.path()); },
                   {"unknown.toml:12:", "fits", "unknown parameter 'BLOCK_Q'"});
  try {
    ConfigSpace::load(f.path());
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), f.path().string() + ":12");
  }
}

TEST(ConfigSpaceErrors, BadExpression) {
  expect_bad_input([] { ConfigSpace::parse(space_with("B = [3, 5]", "fits = \"A * (B <= m\""), "s.toml"); },
                   {"s.toml:12:", "constraint 'fits'", "A * (B <= m"});
  expect_bad_input([] { ConfigSpace::parse(space_with("B = [3, 5]", "fits = \"A <== m\""), "s.toml"); },
                   {"s.toml:12:", "A <== m"});
  expect_bad_input([] { ConfigSpace::parse(space_with("B = [3, 5]", "fits = 7"), "s.toml"); },
                   {"s.toml:12:", "'fits' must be a string"});
}

TEST(ConfigSpaceErrors, DerivedUsedBeforeDefined) {
  const std::string text = space_with("B = [3, 5]", "fits = \"y <= m\"") +
                           "[template.derived]\n"  // 13
                           "x = \"y * 2\"\n"       // 14
                           "y = \"A + B\"\n";      // 15
  expect_bad_input([&] { ConfigSpace::parse(text, "d.toml"); },
                   {"d.toml:14:", "'y' is used", "before it is defined"});
}

TEST(ConfigSpaceErrors, BadParameterValues) {
  expect_bad_input([] { ConfigSpace::parse(space_with("B = []", "fits = \"A <= m\""), "v.toml"); },
                   {"v.toml:9:", "parameter 'B'"});
  expect_bad_input([] { ConfigSpace::parse(space_with("B = [3, 3]", "fits = \"A <= m\""), "v.toml"); },
                   {"v.toml:9:", "lists 3 twice"});
  expect_bad_input(
      [] { ConfigSpace::parse(space_with("B = { pow2 = [3, 8] }", "fits = \"A <= m\""), "v.toml"); },
      {"v.toml:9:", "powers of two"});
  expect_bad_input(
      [] { ConfigSpace::parse(space_with("B = { start = 5, stop = 1 }", "fits = \"A <= m\""), "v.toml"); },
      {"v.toml:9:", "start <= stop"});
  expect_bad_input(
      [] {
        ConfigSpace::parse(space_with("B = { start = 1, stop = 9, stride = 2 }", "fits = \"A <= m\""),
                           "v.toml");
      },
      {"v.toml:9:", "unknown key 'stride'"});
  expect_bad_input([] { ConfigSpace::parse(space_with("B = \"big\"", "fits = \"A <= m\""), "v.toml"); },
                   {"v.toml:9:", "parameter 'B'"});
}

TEST(ConfigSpaceErrors, NameClashesAndBadPattern) {
  expect_bad_input([] { ConfigSpace::parse(space_with("m = [3, 5]", "fits = \"A <= m\""), "n.toml"); },
                   {"n.toml:9:", "'m' is already used"});
  expect_bad_input(
      [] { ConfigSpace::parse(space_with("elem_bytes = [3, 5]", "fits = \"A <= m\""), "n.toml"); },
      {"n.toml:9:", "'elem_bytes' is already used"});
  // C is not in the pattern "a{A}.b{B}".
  std::string text = space_with("B = [3, 5]", "fits = \"A <= m\"");
  text.replace(text.find("B = [3, 5]"), 10, "B = [3, 5]\nC = [1]");
  expect_bad_input([&] { ConfigSpace::parse(text, "n.toml"); }, {"n.toml:5:", "bad name pattern", "'C'"});
}

TEST(ConfigSpaceErrors, EmptySpace) {
  expect_bad_input([] { ConfigSpace::parse("kernel = \"toy\"\ndims = [\"m\"]\n", "e.toml"); },
                   {"e.toml:1:", "no [[template]]", "empty space"});
  expect_bad_input(
      [] {
        ConfigSpace::parse("kernel = \"toy\"\ndims = [\"m\"]\n[[template]]\nname = \"t\"\npattern = \"x\"\n",
                           "e.toml");
      },
      {"e.toml:3:", "non-empty [template.params]"});
  // Non-empty file, but the constraints reject every point.
  const auto space = ConfigSpace::parse(space_with("B = [3, 5]", "never = \"A > 100\""), "e.toml");
  ProblemContext c;
  c.dims = {{"m", 7}};
  expect_bad_input([&] { space.enumerate(c); }, {"e.toml", "empty", "m=7", "t.never 6"});
}

TEST(ConfigSpaceErrors, UnknownKeysAndMissingFile) {
  expect_bad_input(
      [] {
        ConfigSpace::parse(
            space_with("B = [3, 5]", "fits = \"A <= m\"") + "[template.constrains]\nx = \"1\"\n", "k.toml");
      },
      {"k.toml:", "unknown key 'constrains'"});
  expect_bad_input([] { ConfigSpace::load("/nonexistent/dir/space.toml"); },
                   {"cannot open", "/nonexistent/dir/space.toml"});
}

TEST(ConfigSpaceErrors, DefaultIsNotPartOfASpace) {
  // The fallback config is the template spec's (KernelSpec::default_config), not the space's.
  std::string text = space_with("B = [3, 5]", "fits = \"A <= m\"");
  text.replace(text.find("\n\n[template.params]"), 0, "\ndefault = { A = 2, B = 4 }");
  expect_bad_input([&] { ConfigSpace::parse(text, "def.toml"); }, {"def.toml:", "unknown key 'default'"});
}

/// A space of the gemm family with one gemv template whose params are `params` (TOML lines).
std::string gemv_space(const std::string& head, const std::string& tmpl, const std::string& params) {
  return "kernel = \"gemm\"\n" + head + "[[template]]\nname = \"gemv\"\n" + tmpl + "\n[template.params]\n" +
         params;
}

const char* const kGemvParams = "BLOCK_K = [256]\nSPLIT_K = [1]\nWARPS = [4]\nROWS_PER_BLOCK = [2]\n";

TEST(ConfigSpaceErrors, ATemplatedKernelTakesItsFactsFromTheSpecs) {
  const auto s = ConfigSpace::parse(gemv_space("", "", kGemvParams), "g.toml");
  EXPECT_EQ(s.dims(), (std::vector<std::string>{"m", "n", "k"}));  // from the specs
  ASSERT_NE(s.templates()[0].spec, nullptr);
  EXPECT_EQ(s.templates()[0].layouts,
            (std::vector<std::string>{"nt", "nt+bias", "nt+silu", "nt+bias+silu"}));  // the spec's
  expect_bad_input(
      [] { ConfigSpace::parse(gemv_space("dims = [\"m\", \"k\", \"n\"]\n", "", kGemvParams), "d.toml"); },
      {"d.toml:2:", "dimensions m, n, k"});
  expect_bad_input(
      [] { ConfigSpace::parse(gemv_space("", "pattern = \"k{BLOCK_K}\"\n", kGemvParams), "p.toml"); },
      {"p.toml:4:", "remove 'pattern'"});
  expect_bad_input([] { ConfigSpace::parse(gemv_space("", "layouts = [\"nn\"]\n", kGemvParams), "l.toml"); },
                   {"l.toml:", "layout 'nn' is not served", "nt"});
  expect_bad_input(
      [] {
        ConfigSpace::parse(
            gemv_space("", "", "SPLIT_K = [1]\nBLOCK_K = [256]\nWARPS = [4]\nROWS_PER_BLOCK = [2]\n"),
            "o.toml");
      },
      {"o.toml:", "template-argument order", "BLOCK_K, SPLIT_K, WARPS, ROWS_PER_BLOCK"});
  std::string unknown = gemv_space("", "", kGemvParams);
  unknown.replace(unknown.find("\"gemv\""), 6, "\"gemw\"");
  expect_bad_input([&] { ConfigSpace::parse(unknown, "u.toml"); },
                   {"u.toml:2:", "no template 'gemw'", "gemv"});
}

TEST(ConfigSpaceErrors, EnumeratingTemplatesNeedsTheDtype) {
  const auto s = ConfigSpace::parse(gemv_space("", "", kGemvParams), "g.toml");
  ProblemContext c;
  c.dims = {{"m", 1}, {"n", 64}, {"k", 256}};
  expect_bad_input([&] { s.enumerate(c); }, {"g.toml", "dtype"});
  c.dtype = DType::kBF16;
  EXPECT_EQ(s.enumerate(c).configs.size(), 1u);
  c.dims = {{"m", 17}, {"n", 64}, {"k", 256}};  // gemv serves m <= 16: its spec refuses the point
  expect_bad_input([&] { s.enumerate(c); }, {"empty", "gemv.spec 1"});
  c.dtype = DType::kFP8E4M3;
  expect_bad_input([&] { s.enumerate(c); }, {"empty", "gemv.dtype 1"});
}

}  // namespace
}  // namespace ktune::tuner
