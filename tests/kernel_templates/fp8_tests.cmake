# fp8_gemm's suites, included by this folder's CMakeLists.txt: unit (CPU reference, e4m3
# decoding, spec, catalog), nvrtc (a sample compiles for sm_90 and sm_89, no spills in the
# main configs, sm_80 refused) and gpu (skips without a device or below sm_89).
ktune_add_gtest(NAME ktune_fp8_unit_tests LABEL unit
  SOURCES fp8_gemm_spec_test.cpp
  LIBS ktune_kernel_templates tomlplusplus::tomlplusplus)

ktune_add_gtest(NAME ktune_fp8_nvrtc_tests LABEL nvrtc
  SOURCES fp8_gemm_nvrtc_test.cpp
  LIBS ktune_kernel_templates ktune_harness)

# Carry this executable to the GPU machine with ktune_fp8_bench (docs/kernels.md, "fp8_gemm").
ktune_add_gtest(NAME ktune_fp8_gpu_tests LABEL gpu
  SOURCES fp8_gemm_gpu_test.cpp gpu_plan_runner.cpp gemm_gpu_fixture.cpp
  LIBS ktune_kernel_templates ktune_harness ktune_measure_core)

# The default space and shape set against the spec (needs the tuner's space reader).
ktune_add_gtest(NAME ktune_fp8_space_tests LABEL unit
  SOURCES fp8_gemm_space_test.cpp
  LIBS ktune_kernel_templates ktune_tuner)
target_compile_definitions(ktune_fp8_space_tests PRIVATE KTUNE_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
