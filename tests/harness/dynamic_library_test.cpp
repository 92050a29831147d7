#include "harness/dynamic_library.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

TEST(DynamicLibrary, MissingLibraryIsNoDeviceNamingIt) {
  try {
    DynamicLibrary::open({"libktune_missing_abc.so.7", "/nonexistent/libktune_missing_abc.so"},
                         "a test library");
    FAIL() << "opened a library that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNoDevice);
    EXPECT_EQ(exit_code(e.kind()), 3);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cannot open libktune_missing_abc.so.7 (a test library): ", 0), 0u) << what;
    EXPECT_NE(what.find("also tried: /nonexistent/libktune_missing_abc.so"), std::string::npos) << what;
  }
}

TEST(DynamicLibrary, OpensFirstWorkingCandidateAndResolvesSymbols) {
  DynamicLibrary lib = DynamicLibrary::open({"libktune_missing_abc.so", "libm.so.6"}, "the C math library");
  EXPECT_EQ(lib.name(), "libm.so.6");
  using CosFn = double (*)(double);
  auto cos_fn = reinterpret_cast<CosFn>(lib.require("cos"));
  const double x = 0.7318;  // any value; compared with the linked std::cos
  EXPECT_DOUBLE_EQ(cos_fn(x), std::cos(x));
  EXPECT_EQ(lib.symbol("ktune_no_such_symbol"), nullptr);
  try {
    lib.require("ktune_no_such_symbol");
    FAIL() << "require of a missing symbol returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNoDevice);
    EXPECT_NE(std::string(e.what()).find("ktune_no_such_symbol"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("libm.so.6"), std::string::npos);
  }
  DynamicLibrary moved = std::move(lib);
  EXPECT_TRUE(moved.is_open());
  EXPECT_FALSE(lib.is_open());  // NOLINT(bugprone-use-after-move): testing the moved-from state
}

TEST(DynamicLibrary, ToolkitCandidatesIncludeSonameAndCudaHome) {
  ASSERT_EQ(setenv("CUDA_HOME", "/opt/my-cuda", 1), 0);
  const auto names = toolkit_library_candidates("nvrtc", "13");
  unsetenv("CUDA_HOME");
  ASSERT_GE(names.size(), 6u);
  EXPECT_EQ(names[0], "libnvrtc.so.13");
  EXPECT_EQ(names[1], "libnvrtc.so");
  EXPECT_NE(std::find(names.begin(), names.end(), "/opt/my-cuda/lib64/libnvrtc.so.13"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "/usr/local/cuda/lib64/libnvrtc.so.13"), names.end());
}

}  // namespace
}  // namespace ktune::harness
