#include "tuner/space/config_space.hpp"

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "test_util.hpp"

namespace ktune::tuner {
namespace {

constexpr const char* kToy = R"(
kernel = "toy"
dims = ["m", "k"]

[[template]]
name = "t"
pattern = "a{A}.b{B}.c{C}"

[template.params]
A = [1, 2, 4, 8]
B = { start = 1, stop = 7, step = 3 }
C = { pow2 = [2, 8] }

[template.derived]
prod = "A * C"
bytes = "prod * elem_bytes"

[template.constraints]
prod_fits = "prod <= m"
b_below_k = "B < k"
odd_sum = "(A + B) % 2 == 1"
smem = "bytes <= max_smem_per_block"
)";

/// A template as the TOML text names it, read with a regex (independent of ConfigSpace's parser).
struct TemplateInFile {
  std::string name;
  std::set<std::string> layouts;  ///< empty: the file lists none
};

std::vector<TemplateInFile> templates_in_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<TemplateInFile> out;
  const std::regex name_re(R"re(^name\s*=\s*"([^"]+)")re");
  const std::regex layouts_re(R"re(^layouts\s*=\s*\[(.*)\])re");
  const std::regex quoted_re(R"re("([^"]*)")re");
  bool in_template_header = false;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.rfind("[[template]]", 0) == 0) {
      out.emplace_back();
      in_template_header = true;
    } else if (line.rfind("[", 0) == 0) {
      in_template_header = false;  // a [template.params] or other table
    } else if (in_template_header && std::regex_search(line, m, name_re)) {
      out.back().name = m[1];
    } else if (in_template_header && std::regex_search(line, m, layouts_re)) {
      const std::string list = m[1];
      for (std::sregex_iterator it(list.begin(), list.end(), quoted_re), end; it != end; ++it)
        out.back().layouts.insert((*it)[1]);
    }
  }
  EXPECT_FALSE(out.empty()) << "no [[template]] in " << path;
  return out;
}

ProblemContext toy_context(int64_t m, int64_t k, int64_t elem_bytes, int64_t smem) {
  ProblemContext c;
  c.dims = {{"k", k}, {"m", m}};  // any order
  c.elem_bytes = elem_bytes;
  c.limits.max_smem_per_block = smem;
  return c;
}

TEST(ConfigSpace, ParsesValueListsRangesPowersOfTwo) {
  const auto space = ConfigSpace::parse(kToy, "toy.toml");
  EXPECT_EQ(space.kernel(), "toy");
  EXPECT_EQ(space.dims(), (std::vector<std::string>{"m", "k"}));
  ASSERT_EQ(space.templates().size(), 1u);
  const auto& t = space.templates()[0];
  ASSERT_EQ(t.params.size(), 3u);
  EXPECT_EQ(t.params[0].name, "A");
  EXPECT_EQ(t.params[0].values, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(t.params[1].name, "B");
  EXPECT_EQ(t.params[1].values, (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(t.params[2].name, "C");
  EXPECT_EQ(t.params[2].values, (std::vector<int64_t>{2, 4, 8}));
  EXPECT_EQ(t.constraints.size(), 4u);
  EXPECT_EQ(t.constraints[1].name, "b_below_k");
  EXPECT_EQ(t.constraints[1].line, 20u);
  EXPECT_EQ(space.size(), 36u);
  EXPECT_EQ(t.spec, nullptr);  // a kernel without templates
}

TEST(ConfigSpace, ConstraintsPruneExactlyWhatTheyShould) {
  const auto space = ConfigSpace::parse(kToy, "toy.toml");
  // Odd values, so nothing lines up with the constraints by accident.
  const int64_t m = 13, k = 5, elem = 3, smem = 20;
  const auto e = space.enumerate(toy_context(m, k, elem, smem));

  // Independent reference: the same rules written out by hand, first failing rule counted.
  std::vector<Config> want;
  uint64_t counts[4] = {0, 0, 0, 0};
  for (int64_t a : {1, 2, 4, 8}) {
    for (int64_t b : {1, 4, 7}) {
      for (int64_t c : {2, 4, 8}) {
        if (!(a * c <= m))
          ++counts[0];
        else if (!(b < k))
          ++counts[1];
        else if ((a + b) % 2 != 1)
          ++counts[2];
        else if (!(a * c * elem <= smem))
          ++counts[3];
        else
          want.emplace_back("t", std::vector<Config::Param>{{"A", a}, {"B", b}, {"C", c}});
      }
    }
  }
  EXPECT_EQ(e.configs, want);  // same configs, same order (last parameter fastest)
  EXPECT_EQ(e.total, 36u);
  EXPECT_EQ(e.pruned, 36u - want.size());
  ASSERT_EQ(e.pruned_by.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(e.pruned_by[i].count, counts[i]) << e.pruned_by[i].constraint;
  EXPECT_GT(counts[0], 0u);
  EXPECT_GT(counts[1], 0u);
  EXPECT_GT(counts[2], 0u);
  EXPECT_GT(counts[3], 0u);
  EXPECT_NE(e.summary().find("t.odd_sum"), std::string::npos) << e.summary();

  // Diagnostics agree with the enumeration.
  EXPECT_EQ(space.first_failing_constraint(Config("t", {{"A", 8}, {"B", 1}, {"C", 2}}),
                                           toy_context(m, k, elem, smem)),
            "t.prod_fits");
  EXPECT_EQ(space.first_failing_constraint(want.front(), toy_context(m, k, elem, smem)), std::nullopt);
  const auto derived =
      space.derived_values(Config("t", {{"A", 4}, {"B", 1}, {"C", 2}}), toy_context(m, k, elem, smem));
  ASSERT_EQ(derived.size(), 2u);
  EXPECT_EQ(derived[0], (std::pair<std::string, double>{"prod", 8}));
  EXPECT_EQ(derived[1], (std::pair<std::string, double>{"bytes", 24}));
}

TEST(ConfigSpace, ContainsChecksTemplateOrderAndValues) {
  const auto space = ConfigSpace::parse(kToy, "toy.toml");
  EXPECT_TRUE(space.contains(Config("t", {{"A", 8}, {"B", 7}, {"C", 2}})));
  EXPECT_FALSE(space.contains(Config("t", {{"A", 3}, {"B", 7}, {"C", 2}})));
  EXPECT_FALSE(space.contains(Config("t", {{"B", 7}, {"A", 8}, {"C", 2}})));
  EXPECT_FALSE(space.contains(Config("u", {{"A", 8}, {"B", 7}, {"C", 2}})));
  EXPECT_FALSE(space.contains(Config("t", {{"A", 8}, {"B", 7}})));
}

TEST(ConfigSpace, WrongShapeDimensionsAreBadInput) {
  const auto space = ConfigSpace::parse(kToy, "toy.toml");
  ProblemContext c;
  c.dims = {{"m", 8}, {"n", 8}};
  test::expect_bad_input([&] { space.enumerate(c); }, {"m=8,n=8", "m,k"});
  c.dims = {{"m", 8}, {"k", 8}, {"n", 3}};
  test::expect_bad_input([&] { space.enumerate(c); }, {"n=3"});
}

TEST(ConfigSpace, EmptyAfterPruningIsBadInputWithCounts) {
  const auto space = ConfigSpace::parse(kToy, "toy.toml");
  test::expect_bad_input([&] { space.enumerate(toy_context(1, 5, 2, 1000)); },
                         {"toy.toml", "empty", "m=1", "kept 0 of 36", "t.prod_fits 36"});
}

TEST(ConfigSpace, GemmSpaceLoadsAndNamesAreUnique) {
  const auto space = ConfigSpace::load(test::source_configs() / "spaces" / "gemm.toml");
  EXPECT_EQ(space.kernel(), "gemm");
  // The templates in file order, read from the text independently of the parser.
  std::vector<std::string> in_file;
  for (const auto& t : templates_in_file(test::source_configs() / "spaces" / "gemm.toml"))
    in_file.push_back(t.name);
  ASSERT_GE(in_file.size(), 3u) << "tiled, gemv and mma at least";
  ASSERT_EQ(space.templates().size(), in_file.size());
  for (size_t i = 0; i < in_file.size(); ++i) EXPECT_EQ(space.templates()[i].name, in_file[i]);
  // Every point of the unpruned product gets its own name.
  std::set<std::string> names;
  uint64_t points = 0;
  for (const auto& t : space.templates()) {
    std::vector<size_t> idx(t.params.size(), 0);
    for (uint64_t p = 0; p < t.size(); ++p, ++points) {
      std::vector<Config::Param> params;
      for (size_t i = 0; i < t.params.size(); ++i)
        params.emplace_back(t.params[i].name, t.params[i].values[idx[i]]);
      names.insert(space.canonical_name(Config(t.name, params), DType::kBF16, "nt"));
      for (size_t i = t.params.size(); i-- > 0;) {
        if (++idx[i] < t.params[i].values.size()) break;
        idx[i] = 0;
      }
    }
    ASSERT_NE(t.spec, nullptr) << t.name;
    EXPECT_EQ(t.spec->variant(), t.name);
  }
  EXPECT_EQ(names.size(), points);
  EXPECT_EQ(points, space.size());
  // Names are the specs'.
  const Config tiled("tiled", {{"BLOCK_M", 64},
                               {"BLOCK_N", 64},
                               {"BLOCK_K", 32},
                               {"WARPS_M", 2},
                               {"WARPS_N", 2},
                               {"STAGES", 2},
                               {"SPLIT_K", 1}});
  EXPECT_EQ(space.canonical_name(tiled, DType::kBF16, "nt"), "gemm.bf16.nt.64x64x32.w2x2.s2.sk1");
  const Config gemv("gemv", {{"BLOCK_K", 256}, {"SPLIT_K", 1}, {"WARPS", 4}, {"ROWS_PER_BLOCK", 2}});
  EXPECT_EQ(space.canonical_name(gemv, DType::kF16, "nt"), "gemm.f16.nt.gemv.k256.sk1.w4.r2");
}

TEST(ConfigSpace, GemmSpaceOffersGemvOnlyForSkinnyShapes) {
  const auto space = ConfigSpace::load(test::source_configs() / "spaces" / "gemm.toml");
  auto count = [&](int64_t m, const char* tmpl) {
    ProblemContext c;
    c.dims = {{"m", m}, {"n", 4096}, {"k", 4096}};
    c.elem_bytes = 2;
    c.dtype = DType::kBF16;
    const auto e = space.enumerate(c);
    size_t n = 0;
    for (const auto& cfg : e.configs) n += cfg.variant == tmpl ? 1 : 0;
    // The diagnostic path recompiles the expressions per call: check a sample.
    for (size_t i = 0; i < e.configs.size(); i += 97) {
      EXPECT_EQ(space.first_failing_constraint(e.configs[i], c), std::nullopt) << e.configs[i].key();
    }
    return n;
  };
  EXPECT_GT(count(1, "gemv"), 0u);
  EXPECT_GT(count(1, "tiled"), 0u);
  EXPECT_EQ(count(128, "gemv"), 0u);
  EXPECT_GT(count(128, "tiled"), count(1, "tiled"));  // tile_fits_m prunes tall tiles for m = 1
}

TEST(ConfigSpace, TemplatesServeTheirLayouts) {
  const auto file = test::source_configs() / "spaces" / "gemm.toml";
  const auto space = ConfigSpace::load(file);
  const auto in_file = templates_in_file(file);
  std::set<std::string> serve_nn, skip_nn;
  for (const auto& t : in_file) {
    // The layouts the file lists, else the template's spec's (what the space then searches).
    std::set<std::string> layouts = t.layouts;
    if (layouts.empty()) {
      for (const auto& l : kernel_templates::find_spec("gemm", t.name).layouts()) layouts.insert(l);
    }
    (layouts.count("nn") != 0 ? serve_nn : skip_nn).insert(t.name);
  }
  // Both sets non-empty, or the test below proves nothing (tiled, mma serve nn; gemv and the wgmma entries
  // not).
  ASSERT_FALSE(serve_nn.empty());
  ASSERT_FALSE(skip_nn.empty());

  ProblemContext c;
  c.dims = {{"m", 4}, {"n", 4096}, {"k", 4096}};
  c.elem_bytes = 2;  // a half dtype, which mma serves
  c.dtype = DType::kF16;
  c.layout = "nn";
  const auto e = space.enumerate(c);
  std::set<std::string> seen;
  for (const auto& cfg : e.configs) {
    EXPECT_EQ(serve_nn.count(cfg.variant), 1u) << cfg.key();
    seen.insert(cfg.variant);
  }
  EXPECT_EQ(seen, serve_nn);
  for (const auto& name : skip_nn) {
    SCOPED_TRACE(name);
    size_t layout_rows = 0;
    for (const auto& p : e.pruned_by) {
      if (p.template_name != name || p.constraint != "layout") continue;
      ++layout_rows;
      EXPECT_EQ(p.count, space.template_space(name).size());
    }
    EXPECT_EQ(layout_rows, 1u);
  }
  const Config gemv("gemv", {{"BLOCK_K", 256}, {"SPLIT_K", 1}, {"WARPS", 4}, {"ROWS_PER_BLOCK", 2}});
  EXPECT_EQ(space.first_failing_constraint(gemv, c), "gemv.layout");
  c.layout = "nt";
  EXPECT_EQ(space.first_failing_constraint(gemv, c), std::nullopt);
}

TEST(ConfigSpace, DeviceLimitsPrune) {
  const auto space = ConfigSpace::load(test::source_configs() / "spaces" / "gemm.toml");
  ProblemContext big;
  big.dims = {{"m", 4096}, {"n", 4096}, {"k", 4096}};
  big.elem_bytes = 4;
  big.dtype = DType::kF32;
  ProblemContext small = big;
  small.limits.max_smem_per_block = 48 * 1024;  // the default without opt-in
  const auto eb = space.enumerate(big);
  const auto es = space.enumerate(small);
  EXPECT_LT(es.configs.size(), eb.configs.size());
  for (const auto& c : es.configs) {
    if (c.variant != "tiled") continue;
    EXPECT_LE((c.at("BLOCK_M") + c.at("BLOCK_N")) * c.at("BLOCK_K") * 4 * c.at("STAGES"), 48 * 1024)
        << c.key();
  }
}

}  // namespace
}  // namespace ktune::tuner
