// Pending cubins (user_kernel_pending_cubin.hpp): a cubin index may list a cubin before its compiler
// has made it, so `ktune tune` measures the ready configs while the others compile. The spec waits
// for a pending cubin in compile_spec, until another thread (standing for ktune.triton's compiler)
// rewrites the index with the cubin whole or failed; a failed compile is an error of its candidate;
// a waiter gives up when its entry leaves the index or the index stays unchanged too long.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "kernel_templates/user_kernel/user_kernel_pending_cubin.hpp"
#include "kernel_templates/user_kernel/user_kernel_spec.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

/// A scale kernel whose cubins are listed in scale.cubins/index.toml.
constexpr const char* kDescription = R"toml(dims = ["n"]
dtypes = ["f16"]

[[template]]
name = "scale"
[template.params]
BLOCK = [256, 512, 1024]
num_warps = [4]

[[arg]]
name = "x"
kind = "input"
elements = "n"

[[arg]]
name = "y"
kind = "output"
elements = "n"

[[launch]]
grid = "ceil_div(n, BLOCK)"

[reference]
config = { BLOCK = 256, num_warps = 4 }

[prebuilt]
arch = "sm_90"
producer = "triton 3.6.0, source 0123456789abcdef"
)toml";

/// One [[cubin]] of BLOCK = `block`: whole (`state` ""), or with `state` as its last line.
std::string entry(int block, const std::string& state, uint32_t shared = 0) {
  std::string out = fmt::format(R"([[cubin]]
config = {{ BLOCK = {0}, num_warps = 4 }}
dtype = "f16"
file = "b{0}.cubin"
threads = 128
name = "triton.3.6.0.BLOCK={0}.w4.s3"
)",
                                block);
  if (state.empty()) return out + fmt::format("entry = \"scale\"\nshared = {}\nscratch = [0, 0]\n\n", shared);
  return out + state + "\n\n";
}

Config config_of(int block) { return Config("scale", {{"BLOCK", block}, {"num_warps", 4}}); }

class PendingCubin : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("ktune_pending_{}_{}", ::testing::UnitTest::GetInstance()->random_seed(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "scale.cubins");
    write("scale.cubins/b256.cubin",
          "\x7f"
          "ELF-256");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  /// Rewrites the index whole, as the compiler does (a new file renamed over the old one).
  void write_index(const std::string& text) const {
    write("scale.cubins/.index.tmp", text);
    fs::rename(dir_ / "scale.cubins/.index.tmp", dir_ / "scale.cubins/index.toml");
  }
  UserKernelDescription read() const {
    return parse_user_kernel("scale", kDescription, dir_ / "scale.toml", "", dir_ / "scale.cu");
  }

  fs::path dir_;
  // a random problem: the waiting does not depend on its size
  Problem problem_{{{"n", std::uniform_int_distribution<int64_t>(1, 1 << 20)(rng_)}}, DType::kF16, ""};
  static inline std::mt19937_64 rng_{std::random_device{}()};
};

TEST_F(PendingCubin, PendingAndFailedEntriesAreReadWithoutTheirFiles) {
  write_index(entry(256, "") + entry(512, "pending = true") + entry(1024, R"(failed = "out of registers")"));
  const UserKernelSpec spec(read());
  const auto& cubins = spec.description().prebuilt->cubins;
  ASSERT_EQ(cubins.size(), 3u);
  EXPECT_FALSE(cubins[0].pending);
  EXPECT_TRUE(cubins[1].pending);
  EXPECT_EQ(cubins[2].failed, "out of registers");
  EXPECT_TRUE(cubins[1].entry.empty());
  // the space lists them all: a pending or failed cubin is decided when its candidate compiles
  for (int block : {256, 512, 1024})
    EXPECT_EQ(spec.tuning_rejection(problem_, config_of(block)).value_or(""), "") << block;
  EXPECT_EQ(spec.canonical_name(problem_, config_of(512)), "scale.f16.triton.3.6.0.BLOCK=512.w4.s3");
}

TEST_F(PendingCubin, MistakesOfAPendingEntryNameTheIndexLine) {
  const auto error_of = [&](const std::string& index) -> std::string {
    write_index(index);
    try {
      read();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string e = error_of(entry(256, "") + entry(512, "pending = 1"));
  EXPECT_NE(e.find("index.toml:17: cubin 2.pending"), std::string::npos) << e;
  EXPECT_NE(error_of(entry(512, "pending = true\nfailed = \"x\"")).find("pending or failed, not both"),
            std::string::npos);
  EXPECT_NE(error_of(entry(512, "failed = \"\"")).find("must say why"), std::string::npos);
  // a whole entry still needs its file on disk
  EXPECT_NE(error_of(entry(512, "")).find("b512.cubin' does not exist"), std::string::npos);
}

TEST_F(PendingCubin, CompileSpecWaitsUntilTheCompilerListsTheCubinWhole) {
  write_index(entry(256, "") + entry(512, "pending = true"));
  const UserKernelSpec spec(read());
  EXPECT_THROW(spec.launch_plan(problem_, config_of(512)), Error);  // not compiled yet
  const auto start = std::chrono::steady_clock::now();
  std::thread compiler([&] {
    std::this_thread::sleep_for(milliseconds(60));
    // another cubin announced: the index changed, this one is still pending
    write_index(entry(256, "") + entry(512, "pending = true") + entry(1024, "pending = true"));
    std::this_thread::sleep_for(milliseconds(40));
    write("scale.cubins/b512.cubin",
          "\x7f"
          "ELF-512");
    write_index(entry(256, "") + entry(512, "", 40960));
  });
  const CompileSpec cs = spec.compile_spec(problem_, config_of(512));
  const auto waited = std::chrono::steady_clock::now() - start;
  compiler.join();
  EXPECT_GE(waited, milliseconds(90));
  EXPECT_EQ(cs.prebuilt_cubin, dir_ / "scale.cubins" / "b512.cubin");
  EXPECT_EQ(cs.name_expressions, std::vector<std::string>{"scale"});
  // the launch takes what the whole entry says, and a second compile does not wait
  const LaunchPlan plan = spec.launch_plan(problem_, config_of(512));
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].dims.dynamic_smem_bytes, 40960u);
  EXPECT_EQ(plan.launches[0].dims.grid.x, static_cast<uint32_t>((problem_.dim("n") + 511) / 512));
  EXPECT_EQ(spec.compile_spec(problem_, config_of(512)).prebuilt_cubin, cs.prebuilt_cubin);
}

TEST_F(PendingCubin, AFailedCompileIsAnErrorOfItsCandidateWithTheCompilersReason) {
  write_index(entry(256, "") + entry(512, "pending = true") +
              entry(1024, R"(failed = "ptxas: too much shared")"));
  const UserKernelSpec spec(read());
  try {
    spec.compile_spec(problem_, config_of(1024));
    ADD_FAILURE() << "a failed cubin compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ptxas: too much shared"), std::string::npos) << e.what();
  }
  std::thread compiler([&] {
    std::this_thread::sleep_for(milliseconds(30));
    write_index(entry(256, "") + entry(512, R"(failed = "MLIR pass failed")") +
                entry(1024, R"(failed = "ptxas: too much shared")"));
  });
  try {
    spec.compile_spec(problem_, config_of(512));
    ADD_FAILURE() << "a cubin that failed while waited for compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MLIR pass failed"), std::string::npos) << e.what();
  }
  compiler.join();
}

TEST_F(PendingCubin, AWaiterGivesUpOnAnIdleIndexOrAnEntryThatLeftIt) {
  write_index(entry(256, "") + entry(512, "pending = true"));
  const UserKernelDescription d = read();
  const UserCubin& pending = d.prebuilt->cubins[1];
  const auto start = std::chrono::steady_clock::now();
  try {
    await_pending_cubin(d, pending, milliseconds(150));
    ADD_FAILURE() << "waited forever on nothing";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("still pending"), std::string::npos) << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(150));
  write_index(entry(256, ""));
  try {
    await_pending_cubin(d, pending, milliseconds(5000));
    ADD_FAILURE() << "a cubin that left the index arrived";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("left the index"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
