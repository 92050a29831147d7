// A vendor library's algorithms as candidates of a key (tuner/library/library_candidates.hpp), with a fake
// algorithm source and a fake measurer: they are measured after the search as library calls
// verified against the kernel's reference, stored under names that carry the library version, may
// win (ties going to the heuristic's first), are answered from the cache on a resumed run, and are
// left out where the library does not serve the key, in compile-only sweeps and when the count is 0.

#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "harness/cublaslt_algorithm.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "measure/library_call.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/library/library_candidates.hpp"
#include "tuner/loop/tuning_loop.hpp"

namespace ktune::tuner {
namespace library_loop_test {  // named: the unity build batches this file with others

const cache::GpuInfo kGpu{"Fake GPU", 9, 0, 132, int64_t{141} << 30, "{}"};

Config algorithm(int32_t id, int32_t split_k) {
  harness::CublasLtAlgorithm a;
  a.version = 130100;
  a.id = id;
  a.tile = static_cast<uint32_t>(10 + id);
  a.stages = 8;
  a.split_k = split_k;
  return a.to_config();
}

/// Offers `configs` for every key it is asked about, counting the calls.
class FakeAlgorithms : public LibraryAlgorithms {
 public:
  std::vector<Config> configs(std::string_view kernel, const kernel_templates::Problem& problem,
                              std::size_t count) override {
    ++calls;
    if (!library_serves(kernel, problem)) return {};
    std::vector<Config> out = offered;
    out.resize(std::min(out.size(), count));
    return out;
  }
  std::vector<Config> offered = {algorithm(66, 1), algorithm(31, 4), algorithm(70, 2)};
  int calls = 0;
};

/// The fake measurer, except that library calls run in `library_us` (so one can win) and the
/// requests are kept.
class LibraryAwareMeasurer : public test::FakeMeasurer {
 public:
  double library_us = 1.0;
  std::vector<measure::CandidateRequest> library_requests;

  measure::CandidateResult measure(const measure::CandidateRequest& request) override {
    measure::CandidateResult r = FakeMeasurer::measure(request);
    if (!request.launches.empty() && !request.launches[0].library.is_null()) {
      library_requests.push_back(request);
      if (r.stats) r.stats->median = library_us;
    }
    return r;
  }
  std::vector<measure::CandidateResult> retime(std::vector<measure::CandidateRequest> requests,
                                               int rounds) override {
    std::vector<measure::CandidateResult> out = FakeMeasurer::retime(requests, rounds);
    for (size_t i = 0; i < out.size(); ++i)
      if (!requests[i].launches[0].library.is_null() && out[i].stats) out[i].stats->median = library_us;
    return out;
  }
};

TuneKey key(std::string layout = "nt") {
  return {"gemm", NamedShape{"test", {{"m", 64}, {"n", 512}, {"k", 1024}}}, DType::kBF16, std::move(layout)};
}

TuneOptions options() {
  TuneOptions o;
  o.strategy = "exhaustive";
  o.budget = 6;
  o.compile_threads = 2;
  o.counters = false;
  return o;
}

KeySummary tune(const std::filesystem::path& db_path, const TuneKey& k, const TuneOptions& o,
                LibraryAwareMeasurer& measurer, FakeAlgorithms& algorithms) {
  auto db = cache::ConfigCache::open(db_path);
  static const auto sources = kernel_templates::SourceLibrary::builtin();
  LoopDeps deps{
      test::fake_compile(), o.compile_only ? nullptr : &measurer, &sources, nullptr, nullptr, nullptr,
      &algorithms};
  TuningLoop loop(db, kGpu, cache::RunInfo{}, o, deps);
  return loop.tune(ConfigSpace::load(configs_dir() / "spaces" / "gemm.toml"), k);
}

size_t library_names(const std::vector<std::string>& names) {
  return static_cast<size_t>(std::count_if(names.begin(), names.end(), [](const std::string& n) {
    return n.find(".cublaslt.v130100.") != std::string::npos;
  }));
}

TEST(LibraryCandidates, AreMeasuredAsVerifiedLibraryCallsStoredAndMayWin) {
  test::TempDir dir;
  LibraryAwareMeasurer measurer;
  FakeAlgorithms algorithms;
  const KeySummary s = tune(dir / "a.db", key(), options(), measurer, algorithms);
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.library_candidates, 3u);
  EXPECT_EQ(library_names(measurer.measured), 3u);
  ASSERT_EQ(measurer.library_requests.size(), 3u);
  for (const measure::CandidateRequest& r : measurer.library_requests) {
    ASSERT_EQ(r.launches.size(), 1u);
    const measure::LibraryGemmCall call = measure::library_gemm_call_from_json(r.launches[0].library);
    EXPECT_EQ(call.m, 64);
    EXPECT_EQ(call.n, 512);
    EXPECT_EQ(call.k, 1024);
    EXPECT_EQ(call.layout, "nt");
    ASSERT_TRUE(r.reference.has_value()) << "a library candidate is verified like a template";
    ASSERT_EQ(r.checks.size(), 1u);
    EXPECT_EQ(r.checks[0].output, call.c);
    EXPECT_GT(r.flops, 0);
  }
  // Library calls run in 1 us here, every template in 10-30 us: a library algorithm wins, unless
  // the fake calls all three incorrect.
  ASSERT_TRUE(s.winner.has_value());
  size_t correct = 0;
  for (const auto& n : measurer.measured)
    if (n.find(".cublaslt.") != std::string::npos && !test::fake_incorrect(n)) ++correct;
  if (correct > 0) {
    EXPECT_NE(s.winner->find("gemm.bf16.nt.cublaslt.v130100."), std::string::npos) << *s.winner;
    const Config stored = Config::from_json_text(s.winner_config_json);
    EXPECT_TRUE(harness::is_cublaslt_config(stored));
    EXPECT_EQ(library_canonical_name(
                  "gemm", kernel_templates::Problem{{{"m", 64}, {"n", 512}, {"k", 1024}}, DType::kBF16, "nt"},
                  stored),
              *s.winner);
  }
  auto db = cache::ConfigCache::open(dir / "a.db");
  size_t rows = 0;
  for (const auto& m : test::all_measurements(db))
    if (m.m.config_name.find(".cublaslt.") != std::string::npos) ++rows;
  EXPECT_GE(rows, 3u);
}

TEST(LibraryCandidates, BiasedKeysGetLibraryCallsWithTheBiasAndVerifiedAgainstTheEpilogue) {
  test::TempDir dir;
  LibraryAwareMeasurer measurer;
  FakeAlgorithms algorithms;
  const KeySummary s = tune(dir / "b.db", key("nt+bias"), options(), measurer, algorithms);
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.library_candidates, 3u);
  ASSERT_EQ(measurer.library_requests.size(), 3u);
  for (const measure::CandidateRequest& r : measurer.library_requests) {
    const measure::LibraryGemmCall call = measure::library_gemm_call_from_json(r.launches[0].library);
    EXPECT_EQ(call.layout, "nt+bias");
    const auto bias = std::find_if(r.buffers.begin(), r.buffers.end(),
                                   [&](const measure::BufferSpec& b) { return b.name == call.bias; });
    ASSERT_NE(bias, r.buffers.end()) << "the call's bias is one of the request's buffers";
    EXPECT_EQ(bias->count, 512u);
    EXPECT_EQ(bias->init, measure::BufferSpec::Init::kFill);
  }
}

TEST(LibraryCandidates, AnAlgorithmTheLibraryDescribesBadlyIsLeftOutNotFatal) {
  test::TempDir dir;
  LibraryAwareMeasurer measurer;
  FakeAlgorithms algorithms;
  algorithms.offered = {algorithm(66, 0), algorithm(31, 4)};  // SPLIT_K 0 cannot be named or run
  const KeySummary s = tune(dir / "c.db", key(), options(), measurer, algorithms);
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.library_candidates, 1u);
  EXPECT_EQ(library_names(measurer.measured), 1u);
  EXPECT_TRUE(s.winner.has_value());
}

TEST(LibraryCandidates, TiedAlgorithmsGoToTheOneTheHeuristicRanksFirst) {
  test::TempDir dir;
  LibraryAwareMeasurer measurer;  // every library call measures alike: a tie
  FakeAlgorithms algorithms;
  const KeySummary s = tune(dir / "a.db", key(), options(), measurer, algorithms);
  ASSERT_TRUE(s.winner.has_value());
  const kernel_templates::Problem problem{{{"m", 64}, {"n", 512}, {"k", 1024}}, DType::kBF16, "nt"};
  // The first offered (the heuristic's first) that the fake does not call incorrect; by name alone
  // a31 would come before a66.
  std::string expected;
  for (const Config& c : algorithms.offered) {
    const std::string name = library_canonical_name("gemm", problem, c);
    if (!test::fake_incorrect(name)) {
      expected = name;
      break;
    }
  }
  if (expected.empty()) GTEST_SKIP() << "the fake calls every offered algorithm incorrect";
  EXPECT_EQ(*s.winner, expected);
}

TEST(LibraryCandidates, AResumedRunAnswersThemFromTheCache) {
  test::TempDir dir;
  FakeAlgorithms algorithms;
  LibraryAwareMeasurer first;
  ASSERT_TRUE(tune(dir / "a.db", key(), options(), first, algorithms).error.empty());
  LibraryAwareMeasurer second;
  const KeySummary s = tune(dir / "a.db", key(), options(), second, algorithms);
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(library_names(second.measured), 0u) << "measured again: " << second.measured.size();
  EXPECT_EQ(s.library_candidates, 3u);
  EXPECT_GE(s.from_cache, 3u);
}

TEST(LibraryCandidates, ATemplateWinsWhenTheLibraryIsSlower) {
  test::TempDir dir;
  LibraryAwareMeasurer measurer;
  measurer.library_us = 500.0;
  FakeAlgorithms algorithms;
  const KeySummary s = tune(dir / "a.db", key(), options(), measurer, algorithms);
  ASSERT_TRUE(s.winner.has_value());
  EXPECT_EQ(s.winner->find(".cublaslt."), std::string::npos) << *s.winner;
  EXPECT_EQ(library_names(measurer.measured), 3u);
}

TEST(LibraryCandidates, LeftOutWhereTheLibraryDoesNotServeOrNoneAreAsked) {
  test::TempDir dir;
  FakeAlgorithms algorithms;
  using kernel_templates::Problem;
  const std::vector<std::pair<std::string, int64_t>> dims{{"m", 64}, {"n", 512}, {"k", 1024}};
  EXPECT_TRUE(library_serves("gemm", Problem{dims, DType::kBF16, "nt"}));
  EXPECT_TRUE(library_serves("gemm", Problem{dims, DType::kF16, "nn"}));
  EXPECT_TRUE(library_serves("gemm", Problem{dims, DType::kBF16, "nt+bias"})) << "cuBLASLt's bias epilogue";
  EXPECT_TRUE(library_serves("gemm", Problem{dims, DType::kF32, "nn+bias"}));
  EXPECT_FALSE(library_serves("gemm", Problem{dims, DType::kBF16, "nt+silu"})) << "no SiLU epilogue";
  EXPECT_FALSE(library_serves("gemm", Problem{dims, DType::kBF16, "nt+bias+silu"}));
  EXPECT_FALSE(library_serves("gemm", Problem{dims, DType::kFP8E4M3, "nt"}));
  EXPECT_TRUE(library_serves("fp8_gemm", Problem{dims, DType::kFP8E4M3, "nt"}));
  EXPECT_FALSE(library_serves("fp8_gemm", Problem{dims, DType::kFP8E4M3, "nt+rowcol"}));
  EXPECT_FALSE(
      library_serves("fp8_gemm", Problem{{{"m", 64}, {"n", 520}, {"k", 1024}}, DType::kFP8E4M3, "nt"}))
      << "cuBLASLt's fp8 needs N and K multiples of 16";
  EXPECT_FALSE(library_serves("rmsnorm", Problem{{{"rows", 64}, {"cols", 4096}}, DType::kBF16, ""}));
  {
    LibraryAwareMeasurer measurer;
    TuneOptions o = options();
    o.library_algorithms = 0;
    const int before = algorithms.calls;
    const KeySummary s = tune(dir / "zero.db", key(), o, measurer, algorithms);
    EXPECT_EQ(s.library_candidates, 0u);
    EXPECT_EQ(algorithms.calls, before) << "a count of 0 asks the library nothing";
  }
  {
    LibraryAwareMeasurer measurer;
    TuneOptions o = options();
    o.library_algorithms = 2;
    const KeySummary s = tune(dir / "two.db", key(), o, measurer, algorithms);
    EXPECT_EQ(s.library_candidates, 2u);
    EXPECT_EQ(library_names(measurer.measured), 2u);
  }
  {
    LibraryAwareMeasurer measurer;
    TuneOptions o = options();
    o.compile_only = true;
    const int before = algorithms.calls;
    const KeySummary s = tune(dir / "compile.db", key(), o, measurer, algorithms);
    EXPECT_EQ(s.library_candidates, 0u);
    EXPECT_EQ(algorithms.calls, before) << "a compile-only sweep has no library candidates";
  }
}

TEST(LibraryCandidates, TheSpaceSaysHowManyAndRefusesNonsense) {
  EXPECT_EQ(ConfigSpace::load(configs_dir() / "spaces" / "gemm.toml").library_algorithms(), 8u);
  EXPECT_EQ(ConfigSpace::load(configs_dir() / "spaces" / "fp8_gemm.toml").library_algorithms(), 8u);
  EXPECT_EQ(ConfigSpace::load(configs_dir() / "spaces" / "rmsnorm.toml").library_algorithms(), 0u);
  const std::string base = ConfigSpace::load(configs_dir() / "spaces" / "gemm.toml").kernel();
  for (const char* bad : {"-1", "65", "2.5", "\"eight\""}) {
    const std::string text = std::string("kernel = \"gemm\"\nlibrary_algorithms = ") + bad +
                             "\n[[template]]\nname = \"tiled\"\n[template.params]\nBLOCK_M = [64]\n";
    try {
      ConfigSpace::parse(text, "bad.toml");
      ADD_FAILURE() << "library_algorithms = " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("bad.toml:2"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("library_algorithms"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(base, "gemm");
}

}  // namespace library_loop_test
}  // namespace ktune::tuner
