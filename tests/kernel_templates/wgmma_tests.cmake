# The Hopper wgmma template (gemm_wgmma.cu, sm_90a): unit, nvrtc and gpu suites of its own.
ktune_add_gtest(NAME ktune_wgmma_unit_tests LABEL unit
  SOURCES gemm_wgmma_spec_test.cpp
  LIBS ktune_kernel_templates)
ktune_add_gtest(NAME ktune_wgmma_nvrtc_tests LABEL nvrtc
  SOURCES gemm_wgmma_nvrtc_test.cpp
  LIBS ktune_kernel_templates ktune_harness)
# Carry to the H200 with ktune_gemm_bench; skips (no usable GPU) anywhere but sm_90.
ktune_add_gtest(NAME ktune_wgmma_gpu_tests LABEL gpu
  SOURCES gemm_wgmma_gpu_test.cpp gpu_plan_runner.cpp
  LIBS ktune_kernel_templates ktune_harness ktune_measure_core)
set_tests_properties(ktune_wgmma_gpu_tests PROPERTIES SKIP_REGULAR_EXPRESSION "no usable GPU")
