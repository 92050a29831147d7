// The shipped user kernel examples (examples/byo/) compile with NVRTC, every config of a sample and
// the reference, through the same SourceLibrary the tuner uses; a compile error carries NVRTC's log
// naming the user's file and line. Toolkit only, no GPU.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/user_kernel/user_kernels.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(KTUNE_TEST_SOURCE_DIR) / "examples" / "byo";

struct Example {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> dims;
  std::vector<Config> configs;
};

void compile_all(const Example& ex, DType dtype, const std::string& arch) {
  clear_user_kernels();
  load_kernel_folder(kExamples / ex.name);
  const UserKernelSpec* spec = find_user_kernel(ex.name);
  ASSERT_NE(spec, nullptr);
  const SourceLibrary lib = SourceLibrary::from_environment();
  const Problem p{ex.dims, dtype, ""};
  CompileSpec merged;
  for (const Config& c : ex.configs) {
    ASSERT_EQ(spec->rejection(p, c), std::nullopt) << c.key();
    const CompileSpec one = spec->compile_spec(p, c);
    merged.source_name = one.source_name;
    merged.options = one.options;
    merged.name_expressions.insert(merged.name_expressions.end(), one.name_expressions.begin(),
                                   one.name_expressions.end());
  }
  const CompileSpec ref = spec->reference(p).compile;
  merged.name_expressions.insert(merged.name_expressions.end(), ref.name_expressions.begin(),
                                 ref.name_expressions.end());
  harness::NvrtcCompiler compiler;
  try {
    const harness::CompileResult r = compiler.compile(make_compile_request(merged, lib, arch));
    EXPECT_FALSE(r.cubin.empty());
    for (const auto& e : merged.name_expressions) EXPECT_EQ(r.lowered_names.count(e), 1u) << e;
  } catch (const Error& e) {
    ADD_FAILURE() << ex.name << " " << to_string(dtype) << " " << arch << ": " << e.what() << "\n"
                  << e.detail();
  }
}

TEST(UserKernelNvrtc, TransposeCompilesForEveryDtype) {
  const Example ex{
      "transpose",
      {{"rows", 1000}, {"cols", 777}},
      {Config("transpose", {{"TILE", 16}, {"ROWS", 4}}), Config("transpose", {{"TILE", 32}, {"ROWS", 8}}),
       Config("transpose", {{"TILE", 64}, {"ROWS", 16}})}};
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) compile_all(ex, t, "sm_90");
  compile_all(ex, DType::kBF16, "sm_80");
}

TEST(UserKernelNvrtc, LayerNormCompilesForEveryDtype) {
  const Example ex{"layernorm",
                   {{"rows", 33}, {"hidden", 4096}},
                   {Config("layernorm", {{"THREADS", 32}, {"ROWS", 8}}),
                    Config("layernorm", {{"THREADS", 256}, {"ROWS", 1}}),
                    Config("layernorm", {{"THREADS", 1024}, {"ROWS", 1}})}};
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) compile_all(ex, t, "sm_90");
  compile_all(ex, DType::kF16, "sm_80");
}

TEST(UserKernelNvrtc, GatherCompilesForEveryDtype) {
  const Example ex{
      "gather",
      {{"vocab", 32000}, {"tokens", 77}, {"hidden", 4096}},
      {Config("gather", {{"THREADS", 32}, {"ROWS", 8}}), Config("gather", {{"THREADS", 128}, {"ROWS", 1}}),
       Config("gather", {{"THREADS", 512}, {"ROWS", 2}})}};
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) compile_all(ex, t, "sm_90");
  compile_all(ex, DType::kBF16, "sm_80");
}

TEST(UserKernelNvrtc, ACompileErrorNamesTheUsersFileAndLine) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ktune_byo_broken_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kExamples / "transpose" / "transpose.toml", dir / "transpose.toml",
                             std::filesystem::copy_options::overwrite_existing);
  std::ifstream in(kExamples / "transpose" / "transpose.cu");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Line 12 of the copy loses a declaration the kernel uses.
  const auto pos = text.find("  const int col0 = blockIdx.x * TILE;");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 37, "  const int colzero = blockIdx.x * TILE;");
  std::ofstream(dir / "transpose.cu") << text;
  clear_user_kernels();
  load_kernel_folder(dir);
  const UserKernelSpec& spec = *find_user_kernel("transpose");
  const Problem p{{{"rows", 64}, {"cols", 64}}, DType::kF32, ""};
  const CompileSpec cs = spec.compile_spec(p, spec.default_config(p));
  harness::NvrtcCompiler compiler;
  try {
    compiler.compile(make_compile_request(cs, SourceLibrary::from_environment(), "sm_90"));
    ADD_FAILURE() << "a broken kernel compiled";
  } catch (const Error& e) {
    const std::string log = std::string(e.what()) + "\n" + e.detail();
    EXPECT_NE(log.find("transpose.cu(16)"), std::string::npos) << log;  // the first use of col0
    EXPECT_NE(log.find("col0"), std::string::npos) << log;
  }
  clear_user_kernels();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ktune::kernel_templates
