// The key-line form (core/key_line.hpp) and the runtime's miss recorder (runtime/miss_recorder.hpp)
// without a GPU: lines round-trip and are told apart from TOML; a key is written once a process;
// several processes appending at once (fork) leave one header and whole lines only, every key of
// every process present; a path that cannot be opened is a clear error.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/key_line.hpp"
#include "ktune/error.hpp"
#include "runtime/miss_recorder.hpp"
#include "tests/tuner/loop_test_util.hpp"

namespace ktune::runtime {
namespace {

std::vector<std::string> lines_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(KeyLine, RoundTripsAndOmitsAnEmptyLayout) {
  const KeyLine gemm{"gemm", "m=16,n=4096,k=4096", DType::kBF16, "nt+bias"};
  EXPECT_EQ(format_key_line(gemm), "gemm m=16,n=4096,k=4096 bf16 nt+bias");
  EXPECT_EQ(parse_key_line(format_key_line(gemm)), gemm);
  EXPECT_EQ(format_key_line({"rmsnorm", "rows=7,hidden=4095", DType::kF16, ""}),
            "rmsnorm rows=7,hidden=4095 f16");
  const auto plain = parse_key_line("  rmsnorm\trows=7,hidden=4095   f16 \r");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->shape, "rows=7,hidden=4095");
  EXPECT_FALSE(plain->layout.has_value());
  EXPECT_FALSE(parse_key_line("# a comment").has_value());
  EXPECT_FALSE(parse_key_line("   ").has_value());
}

TEST(KeyLine, BadLinesAndFieldsAreNamed) {
  auto message = [](std::string_view line) {
    try {
      parse_key_line(line);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message("gemm m=16,n=4096").find("got 2 field(s)"), std::string::npos);
  EXPECT_NE(message("gemm m=16 bf16 nt extra").find("got 5 field(s)"), std::string::npos);
  EXPECT_NE(message("gemm m=-1,n=2,k=3 bf16").find("m=-1"), std::string::npos);
  EXPECT_NE(message("gemm m=1,n=2,k=3 f64").find("unknown dtype 'f64' (known: f32, f16, bf16"),
            std::string::npos);
  EXPECT_THROW(format_key_line({"gemm", "m=1 n=2", DType::kBF16, "nt"}), Error);
  EXPECT_THROW(format_key_line({"", "m=1", DType::kBF16, std::nullopt}), Error);
  EXPECT_THROW(format_key_line({"gemm", "m=1", DType::kBF16, "n#t"}), Error);
}

TEST(KeyLine, ToldApartFromTomlShapeSets) {
  EXPECT_TRUE(is_key_line("gemm m=16,n=4096,k=4096 bf16 nt"));
  EXPECT_TRUE(is_key_line("rmsnorm rows=7,hidden=4095 f16"));
  for (const char* toml :
       {"kernel = \"gemm\"", "kernel=\"gemm\"", "dims = [\"m\", \"n\", \"k\"]", "[sweep]", "m = [1, 2, 4]",
        "[[layer]]", "# gemm m=16,n=4096,k=4096 bf16", "gemm m= bf16", "gemm m=1, bf16", "gemm M=1 bf16"})
    EXPECT_FALSE(is_key_line(toml)) << toml;
}

TEST(MissRecorder, WritesEachKeyOnceUnderOneHeader) {
  tuner::test::TempDir dir;
  const auto path = dir / "misses.keys";
  {
    MissRecorder r(path);
    EXPECT_TRUE(r.record({"gemm", "m=24,n=4096,k=4096", DType::kBF16, "nt"}));
    EXPECT_FALSE(r.record({"gemm", "m=24,n=4096,k=4096", DType::kBF16, "nt"}));
    EXPECT_TRUE(r.record({"rmsnorm", "rows=7,hidden=4095", DType::kF16, ""}));
    EXPECT_EQ(r.written(), 2u);
  }
  {
    // Another recorder of the file in this process (a second Runtime): it does not repeat what the
    // first wrote, appends what is new, and writes no second header.
    MissRecorder again(path);
    EXPECT_FALSE(again.record({"gemm", "m=24,n=4096,k=4096", DType::kBF16, "nt"}));
    EXPECT_TRUE(again.record({"softmax", "rows=4,cols=1000", DType::kF32, "causal"}));
    EXPECT_EQ(again.written(), 1u);
  }
  EXPECT_EQ(lines_of(path),
            (std::vector<std::string>{
                std::string(kMissFileHeader).substr(0, std::string(kMissFileHeader).size() - 1),
                "gemm m=24,n=4096,k=4096 bf16 nt", "rmsnorm rows=7,hidden=4095 f16",
                "softmax rows=4,cols=1000 f32 causal"}));
}

TEST(MissRecorder, AFileMadeAgainGetsItsKeysAgain) {
  // A program that deletes or truncates its miss file and records again: the keys written to the
  // old file are written to the new one (the new file may even reuse the old inode number).
  tuner::test::TempDir dir;
  const auto path = dir / "again.keys";
  std::mt19937 gen(std::random_device{}());
  const KeyLine key{"gemm", fmt::format("m={},n=4096,k=4096", 1 + gen() % 4096), DType::kBF16, "nt"};
  const std::string line = format_key_line(key);
  {
    MissRecorder r(path);
    EXPECT_TRUE(r.record(key));
  }
  std::filesystem::remove(path);
  {
    MissRecorder r(path);
    EXPECT_TRUE(r.record(key));
    EXPECT_FALSE(r.record(key));
  }
  EXPECT_EQ(lines_of(path).back(), line);
  std::filesystem::resize_file(path, 0);
  {
    MissRecorder r(path);
    EXPECT_TRUE(r.record(key));
  }
  EXPECT_EQ(lines_of(path).size(), 2u);  // the header and the key
  EXPECT_EQ(lines_of(path).back(), line);
}

TEST(MissRecorder, ConcurrentProcessesAndThreadsAppendWholeLines) {
  tuner::test::TempDir dir;
  const auto path = dir / "shared.keys";
  constexpr int kProcesses = 6;
  constexpr int kThreads = 3;
  constexpr int kKeys = 40;  // per process: half its own, half shared by every process
  // A long shape so that a torn or interleaved write would show.
  auto key = [](int owner, int i) {
    return KeyLine{"gemm", "m=" + std::to_string(1000 + i) + ",n=" + std::to_string(owner) + "0000000,k=4096",
                   DType::kBF16, "nn+bias+silu"};
  };
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int wrote = 0;
      {
        MissRecorder r(path);
        std::vector<std::thread> threads;
        std::atomic<int> count{0};
        for (int t = 0; t < kThreads; ++t) {
          threads.emplace_back([&] {
            // Every thread tries every key (the recorder writes each once); odd keys are shared by
            // every process (owner 9), even ones are the process's own.
            for (int i = 0; i < kKeys; ++i)
              if (r.record(key(i % 2 == 0 ? p + 1 : 9, i))) ++count;
          });
        }
        for (auto& th : threads) th.join();
        wrote = count.load();
      }
      ::_exit(wrote == kKeys ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t c : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(c, &status, 0), c);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a process did not write each key once";
  }
  const auto lines = lines_of(path);
  ASSERT_FALSE(lines.empty());
  size_t headers = 0;
  std::map<std::string, int> count;
  for (const auto& line : lines) {
    if (line + "\n" == kMissFileHeader) {
      ++headers;
      continue;
    }
    const auto parsed = parse_key_line(line);  // throws on a torn line
    ASSERT_TRUE(parsed) << line;
    EXPECT_EQ(parsed->kernel, "gemm");
    EXPECT_EQ(parsed->layout, "nn+bias+silu") << line;
    ++count[line];
  }
  EXPECT_EQ(headers, 1u);
  EXPECT_EQ(lines.front() + "\n", kMissFileHeader);
  // Own keys: one line each; shared keys: one line from each process.
  EXPECT_EQ(count.size(), static_cast<size_t>(kProcesses * kKeys / 2 + kKeys / 2));
  for (const auto& [line, n] : count) {
    const bool shared = line.find(",n=90000000,") != std::string::npos;
    EXPECT_EQ(n, shared ? kProcesses : 1) << line;
  }
}

TEST(MissRecorder, AnUnopenablePathNamesItself) {
  try {
    MissRecorder r("/nonexistent-folder/misses.keys");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-folder/misses.keys"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::runtime
