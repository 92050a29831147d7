// In-process tests of the command line's pieces: the kernel catalog and run_app's mapping of
// failures to exit codes and messages.

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/error_report.hpp"
#include "cli/resume_command.hpp"
#include "core/shape.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "ktune/error.hpp"

namespace ktune::testing {
namespace {

namespace kt = ktune::kernel_templates;

TEST(KernelCatalog, HoldsTheKernelsOfIssue2) {
  // Written out from the issue, independently of the table in kernel_catalog.cpp.
  const std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> want = {
      {"gemm", {{"m", "n", "k"}, {"f32", "f16", "bf16"}}},
      {"rmsnorm", {{"rows", "hidden"}, {"f32", "f16", "bf16"}}},
      {"rmsnorm_rope", {{"tokens", "heads_q", "heads_kv", "head_dim"}, {"f32", "f16", "bf16"}}},
      {"rope_append", {{"tokens", "heads_q", "heads_kv", "head_dim", "rot_dim"}, {"f32", "f16", "bf16"}}},
      {"softmax", {{"rows", "cols"}, {"f32", "f16", "bf16"}}},
      {"swiglu", {{"m", "i"}, {"f32", "f16", "bf16"}}},
      {"decode_attention", {{"batch", "heads_q", "heads_kv", "seq", "head_dim"}, {"bf16"}}},
      {"fp8_gemm", {{"m", "n", "k"}, {"fp8e4m3"}}},
      {"copy", {{"n"}, {"f32", "f16", "bf16"}}},
  };
  EXPECT_EQ(kt::kernel_catalog().size(), want.size());
  for (const auto& [name, dims_dtypes] : want) {
    SCOPED_TRACE(name);
    const auto* k = kt::find_kernel(name);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->name, name);
    EXPECT_EQ(k->dims, dims_dtypes.first);
    std::vector<std::string> dtypes;
    for (const DType d : k->dtypes) dtypes.emplace_back(to_string(d));
    EXPECT_EQ(dtypes, dims_dtypes.second);
    EXPECT_TRUE(kt::is_known_kernel(name));
    EXPECT_FALSE(k->summary.empty());
    // The help text's example is a valid shape already in canonical order.
    const auto shape = ktune::Shape::parse(k->example_shape());
    EXPECT_EQ(shape.normalized(k->dims).canonical(), k->example_shape());
  }
}

TEST(KernelCatalog, UnknownKernelIsBadInputListingTheKnownOnes) {
  EXPECT_FALSE(kt::is_known_kernel("gemmm"));
  try {
    kt::find_kernel("gemmm");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'gemmm'"), std::string::npos) << msg;
    for (const auto& k : kt::kernel_catalog()) EXPECT_NE(msg.find(k.name), std::string::npos) << msg;
  }
}

TEST(KernelCatalog, UnsupportedDtypeIsBadInputNamingTheSupportedOnes) {
  const auto* k = kt::find_kernel("decode_attention");
  EXPECT_TRUE(k->supports(ktune::DType::kBF16));
  EXPECT_FALSE(k->supports(ktune::DType::kF16));
  EXPECT_EQ(k->parse_dtype("bf16"), ktune::DType::kBF16);
  EXPECT_NO_THROW(k->require_dtype(ktune::DType::kBF16));
  EXPECT_THROW(k->require_dtype(ktune::DType::kF16), Error);
  for (const char* bad : {"f16", "f64"}) {
    try {
      k->parse_dtype(bad);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("(supported: bf16)"), std::string::npos) << e.what();
    }
  }
}

/// Runs an app whose one command `go` throws `fail()`; returns (exit code, stderr).
template <typename Fail>
std::pair<int, std::string> run_failing(std::vector<std::string> args, Fail fail) {
  CLI::App app;
  cli::configure_app(app);
  app.add_subcommand("go", "test command")->callback(fail);
  std::vector<char*> argv{const_cast<char*>("ktune")};
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  const int code = cli::run_app(app, static_cast<int>(argv.size()), argv.data());
  (void)::testing::internal::GetCapturedStdout();
  return {code, ::testing::internal::GetCapturedStderr()};
}

TEST(RunApp, EachErrorKindExitsWithItsCode) {
  for (auto kind : {ErrorKind::kRuntime, ErrorKind::kBadInput, ErrorKind::kNoDevice, ErrorKind::kNotFound}) {
    const std::string message = "failure of kind " + std::to_string(static_cast<int>(kind));
    const auto [code, err] = run_failing(
        {"go"}, [&] { throw Error(kind, message, "API_CODE_X", "file.cpp:12", "long detail\nline 2"); });
    EXPECT_EQ(code, static_cast<int>(kind));
    EXPECT_NE(err.find("ktune: error: " + message + "\n"), std::string::npos) << err;
    EXPECT_NE(err.find("API_CODE_X at file.cpp:12"), std::string::npos) << err;
    EXPECT_NE(err.find("long detail\nline 2\n"), std::string::npos) << err;
  }
}

TEST(RunApp, OtherExceptionsAreRuntimeFailures) {
  const auto [code, err] = run_failing({"go"}, [] { throw std::runtime_error("boom 17"); });
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("ktune: error: boom 17"), std::string::npos) << err;
}

TEST(RunApp, ParseErrorsExit2AndHelpExits0) {
  auto ok = [] {};
  EXPECT_EQ(run_failing({"go", "--unknown"}, ok).first, 2);
  EXPECT_EQ(run_failing({}, ok).first, 2);
  EXPECT_EQ(run_failing({"--help"}, ok).first, 0);
  EXPECT_EQ(run_failing({"--version"}, ok).first, 0);
  EXPECT_EQ(run_failing({"go"}, ok).first, 0);
}

/// Every option of `cmd` and its subcommands, with the command path that holds it.
void collect_options(const CLI::App& cmd, const std::string& path,
                     std::vector<std::pair<std::string, const CLI::Option*>>& out) {
  for (const CLI::Option* opt : cmd.get_options()) out.emplace_back(path, opt);
  for (const CLI::App* sub : cmd.get_subcommands([](const CLI::App*) { return true; })) {
    collect_options(*sub, path + " " + sub->get_name(), out);
  }
}

TEST(Help, EveryOptionOfDevicesQueryAndCacheHasAnExample) {
  CLI::App app;
  cli::configure_app(app);
  cli::add_devices_command(app);
  cli::add_query_command(app);
  cli::add_cache_command(app);
  std::vector<std::pair<std::string, const CLI::Option*>> options;
  collect_options(app, "ktune", options);
  int checked = 0;
  for (const auto& [path, opt] : options) {
    const std::string name = opt->get_name();
    if (name == "--help" || name == "--version") continue;
    ++checked;
    EXPECT_NE(opt->get_description().find("e.g."), std::string::npos)
        << path << " " << name << ": \"" << opt->get_description() << "\" has no example";
  }
  EXPECT_GE(checked, 20) << "devices, query and cache declare at least 20 options between them";
}

}  // namespace
}  // namespace ktune::testing

namespace ktune::testing {
namespace {

TEST(ResumeCommand, QuotesForTheShellAndNamesTheDatabase) {
  EXPECT_EQ(cli::shell_quote("m=16,n=4096,k=4096"), "m=16,n=4096,k=4096");
  EXPECT_EQ(cli::shell_quote("/tmp/a b.db"), "'/tmp/a b.db'");
  EXPECT_EQ(cli::shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(cli::shell_quote(""), "''");
  EXPECT_EQ(cli::shell_quote("$HOME"), "'$HOME'");
  // No --db on the line: the database that was used is appended.
  EXPECT_EQ(cli::resume_command({"/opt/ktune", "tune", "--preset", "quick"}, {"/data/h 200.db", ""}),
            "/opt/ktune tune --preset quick --db '/data/h 200.db'");
  // A --db given is kept as it was; --shard auto becomes the shard it resolved to.
  EXPECT_EQ(cli::resume_command({"ktune", "tune", "--db=x.db", "--shard", "auto"}, {"/abs/x.db", "3/8"}),
            "ktune tune --db=x.db --shard 3/8");
  EXPECT_EQ(cli::resume_command({"ktune", "tune", "--shard=auto", "--db", "x.db"}, {"x.db", "0/2"}),
            "ktune tune --shard=0/2 --db x.db");
}

TEST(ExitStatus, RunAppReturnsTheCodeAndPrintsNothing) {
  CLI::App app;
  cli::configure_app(app);
  app.add_subcommand("stop", "test")->callback([] { throw cli::ExitStatus{143}; });
  const char* argv[] = {"ktune", "stop"};
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cli::run_app(app, 2, const_cast<char**>(argv)), 143);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(cli::command_line(), (std::vector<std::string>{"ktune", "stop"}));
}

/// What cli::report_error writes to stderr for `e`, and its exit code.
std::pair<std::string, int> reported(const Error& e) {
  std::ostringstream err;
  std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
  const int code = cli::report_error(e);
  std::cerr.rdbuf(old);
  return {err.str(), code};
}

// An input error that names its file and line in the message says them once; an API error's code
// and call site still follow on their own line.
TEST(ErrorReport, SaysTheLocationOnce) {
  const auto [input, input_code] =
      reported(Error(ErrorKind::kBadInput, "k.toml:4: dims: 'a b' is not a new identifier", "", "k.toml:4"));
  EXPECT_EQ(input, "ktune: error: k.toml:4: dims: 'a b' is not a new identifier\n");
  EXPECT_EQ(input_code, 2);
  const auto [api, api_code] = reported(
      Error(ErrorKind::kNoDevice, "cuInit failed", "CUDA_ERROR_NO_DEVICE", "context.cpp:42", "no GPU"));
  EXPECT_EQ(api, "ktune: error: cuInit failed\n  (CUDA_ERROR_NO_DEVICE at context.cpp:42)\nno GPU\n");
  EXPECT_EQ(api_code, 3);
}

}  // namespace
}  // namespace ktune::testing
