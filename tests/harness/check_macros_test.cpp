// The one error family: every check macro throws ktune::Error carrying the API's own error name,
// the call's text and "file:line". (Driver names come from libcuda when present; the NVRTC and
// CUPTI variants are tested with the real libraries in nvrtc_compiler_test.cpp.)

#include <gtest/gtest.h>

#include <string>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

int g_calls = 0;

CUresult fake_driver_call(CUresult r) {
  ++g_calls;
  return r;
}

/// The error KTUNE_CU_CHECK throws for `r`, with the line it was raised on.
Error cu_error_of(CUresult r, int* line) {
  try {
    *line = __LINE__ + 1;
    KTUNE_CU_CHECK(fake_driver_call(r));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "KTUNE_CU_CHECK did not throw for code " << static_cast<int>(r);
  return Error(ErrorKind::kRuntime, "none");
}

std::string expected_driver_name(CUresult r, const char* real_name) {
  return driver_table_or_null() != nullptr ? real_name : "CUresult " + std::to_string(static_cast<int>(r));
}

TEST(CheckMacros, DriverErrorCarriesNameCallAndPlace) {
  int line = 0;
  const Error e = cu_error_of(CUDA_ERROR_OUT_OF_MEMORY, &line);
  EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
  EXPECT_EQ(e.api_code(), expected_driver_name(CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"));
  const std::string what = e.what();
  EXPECT_NE(what.find("fake_driver_call(r)"), std::string::npos) << what;
  EXPECT_NE(what.find(e.api_code()), std::string::npos) << what;
  EXPECT_NE(what.find("(2)"), std::string::npos) << "numeric code missing: " << what;
  EXPECT_EQ(e.where(), std::string(__FILE__) + ":" + std::to_string(line));
}

TEST(CheckMacros, NoDeviceFamilyMapsToNoDevice) {
  int line = 0;
  for (CUresult r : {CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_STUB_LIBRARY,
                     CUDA_ERROR_SYSTEM_DRIVER_MISMATCH}) {
    EXPECT_EQ(cu_error_of(r, &line).kind(), ErrorKind::kNoDevice) << static_cast<int>(r);
  }
  EXPECT_EQ(cu_error_of(CUDA_ERROR_ILLEGAL_ADDRESS, &line).kind(), ErrorKind::kRuntime);
  EXPECT_EQ(cu_error_of(CUDA_ERROR_NO_DEVICE, &line).api_code(),
            expected_driver_name(CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"));
}

TEST(CheckMacros, SuccessPassesAndCallIsEvaluatedOnce) {
  g_calls = 0;
  EXPECT_NO_THROW(KTUNE_CU_CHECK(fake_driver_call(CUDA_SUCCESS)));
  EXPECT_EQ(g_calls, 1);
  EXPECT_THROW(KTUNE_CU_CHECK(fake_driver_call(CUDA_ERROR_INVALID_VALUE)), Error);
  EXPECT_EQ(g_calls, 2);
}

TEST(CheckMacros, GenericThrowerFormatsEveryPart) {
  try {
    throw_api_error(ErrorKind::kRuntime, "SOME_API_ERROR", 77, "what it means", "some_call(x, y)", "f.cpp:12",
                    "long detail");
    FAIL() << "throw_api_error returned";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "some_call(x, y) failed: SOME_API_ERROR (77): what it means");
    EXPECT_EQ(e.api_code(), "SOME_API_ERROR");
    EXPECT_EQ(e.where(), "f.cpp:12");
    EXPECT_EQ(e.detail(), "long detail");
  }
}

TEST(DriverLoader, EitherWorksOrSaysNoDeviceNamingTheCause) {
  try {
    const DriverApi& api = driver();
    EXPECT_NE(api.cuLaunchKernel, nullptr);
    EXPECT_NE(api.cuCtxSynchronize, nullptr);
    EXPECT_GE(api.driver_version, 12000) << "cuGetProcAddress_v2 needs a CUDA 12 driver";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNoDevice) << e.what();
    const std::string what = e.what();
    EXPECT_TRUE(what.find("libcuda") != std::string::npos || what.find("CUDA_ERROR_") != std::string::npos)
        << what;
    // The failure is remembered: a second call says the same.
    try {
      driver();
      ADD_FAILURE() << "driver() succeeded after failing";
    } catch (const Error& again) {
      EXPECT_STREQ(again.what(), e.what());
    }
  }
}

}  // namespace
}  // namespace ktune::harness
