# The Hopper wgmma template (gemm_wgmma.cu, sm_90a): unit, nvrtc and gpu suites of its own.
ktune_add_gtest(NAME ktune_wgmma_unit_tests LABEL unit
  SOURCES gemm_wgmma_spec_test.cpp
  LIBS ktune_kernel_templates)
ktune_add_gtest(NAME ktune_wgmma_nvrtc_tests LABEL nvrtc
  SOURCES gemm_wgmma_nvrtc_test.cpp
  LIBS ktune_kernel_templates ktune_harness)
# Carry to the H200 with ktune_gemm_bench; skips (no usable GPU) anywhere but sm_90.
ktune_add_gtest(NAME ktune_wgmma_gpu_tests LABEL gpu
  SOURCES gemm_wgmma_gpu_test.cpp gpu_plan_runner.cpp gemm_gpu_fixture.cpp
  LIBS ktune_kernel_templates ktune_harness ktune_measure_core)

# The template's own source on the CPU with a PTX-derived model of wgmma (emulation/wgmma_*).
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/emulation/gemm_wgmma_emulated.hpp
  COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${CMAKE_CURRENT_BINARY_DIR}/emulation/gemm_wgmma_emulated.hpp"
          "-DFILE=${PROJECT_SOURCE_DIR}/kernel_templates/gemm/gemm_wgmma.cu"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/emulation/wgmma_emulate.cmake
  DEPENDS ${PROJECT_SOURCE_DIR}/kernel_templates/gemm/gemm_wgmma.cu ${PROJECT_SOURCE_DIR}/kernel_templates/gemm/gemm_wgmma_block.cuh
          ${PROJECT_SOURCE_DIR}/kernel_templates/gemm/gemm_epilogue.cuh
          ${CMAKE_CURRENT_SOURCE_DIR}/emulation/wgmma_emulate.cmake
  VERBATIM)
ktune_add_gtest(NAME ktune_wgmma_emulation_tests LABEL unit
  SOURCES emulation/wgmma_emulation_test.cpp ${CMAKE_CURRENT_BINARY_DIR}/emulation/gemm_wgmma_emulated.hpp
  LIBS Threads::Threads)
target_include_directories(ktune_wgmma_emulation_tests PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/emulation ${CMAKE_CURRENT_BINARY_DIR}/emulation ${PROJECT_SOURCE_DIR}/kernel_templates/gemm)
# CUDA-style device code (reinterpret_cast stores of 16-bit types into shared memory).
target_compile_options(ktune_wgmma_emulation_tests PRIVATE -w -fno-strict-aliasing -O1)
