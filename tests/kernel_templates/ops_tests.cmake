# The memory-bound operators' suites (rmsnorm, rmsnorm_rope, softmax, swiglu), included by
# this folder's CMakeLists.txt: unit (CPU references, specs, the templates emulated on the CPU),
# nvrtc (a sample of each space compiles for sm_90), gpu (skips without a device); the
# benchmark, ktune_ops_bench, is in bench/kernels.
ktune_add_gtest(NAME ktune_ops_unit_tests LABEL unit
  SOURCES reference_ops_test.cpp ops_spec_test.cpp rope_append_spec_test.cpp
  LIBS ktune_kernel_templates tomlplusplus::tomlplusplus)

# The default spaces and shape sets against the specs (needs the tuner's space reader).
ktune_add_gtest(NAME ktune_ops_space_tests LABEL unit
  SOURCES ops_space_test.cpp
  LIBS ktune_kernel_templates ktune_tuner)
target_compile_definitions(ktune_ops_space_tests PRIVATE KTUNE_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

set(KTUNE_EMULATED_OPS
  ${PROJECT_SOURCE_DIR}/kernel_templates/common/ops_reduce.cuh
  ${PROJECT_SOURCE_DIR}/kernel_templates/rmsnorm/rmsnorm.cu
  ${PROJECT_SOURCE_DIR}/kernel_templates/rmsnorm/rmsnorm_reference.cu
  ${PROJECT_SOURCE_DIR}/kernel_templates/rmsnorm_rope/rope_math.cuh
  ${PROJECT_SOURCE_DIR}/kernel_templates/rmsnorm_rope/rmsnorm_rope.cu
  ${PROJECT_SOURCE_DIR}/kernel_templates/rmsnorm_rope/rmsnorm_rope_reference.cu
  ${PROJECT_SOURCE_DIR}/kernel_templates/rope_append/rope_append.cu
  ${PROJECT_SOURCE_DIR}/kernel_templates/rope_append/rope_append_reference.cu
  ${PROJECT_SOURCE_DIR}/kernel_templates/softmax/softmax_mask.cuh
  ${PROJECT_SOURCE_DIR}/kernel_templates/softmax/softmax.cu
  ${PROJECT_SOURCE_DIR}/kernel_templates/softmax/softmax_reference.cu
  ${PROJECT_SOURCE_DIR}/kernel_templates/swiglu/swiglu.cu
  ${PROJECT_SOURCE_DIR}/kernel_templates/swiglu/swiglu_reference.cu)
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/emulation/ops_templates_emulated.hpp
  COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${CMAKE_CURRENT_BINARY_DIR}/emulation/ops_templates_emulated.hpp"
          "-DFILES=${KTUNE_EMULATED_OPS}" -P ${CMAKE_CURRENT_SOURCE_DIR}/emulation/emulate_ops.cmake
  DEPENDS ${KTUNE_EMULATED_OPS} ${CMAKE_CURRENT_SOURCE_DIR}/emulation/emulate_ops.cmake
  VERBATIM)
ktune_add_gtest(NAME ktune_ops_emulation_tests LABEL unit
  SOURCES emulation/ops_emulation_test.cpp ${CMAKE_CURRENT_BINARY_DIR}/emulation/ops_templates_emulated.hpp
  LIBS ktune_kernel_templates Threads::Threads)
target_include_directories(ktune_ops_emulation_tests PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/emulation ${CMAKE_CURRENT_BINARY_DIR}/emulation)
# The emulated device code is CUDA-style C++; the project's host warning set does not apply to it.
# CUDA vector-load idioms break C++ strict aliasing in the CPU emulation (wrong results at -O2 only).
target_compile_options(ktune_ops_emulation_tests PRIVATE -w -fno-strict-aliasing)
ktune_optimized_test(ktune_ops_emulation_tests)  # the emulated kernels run in this target's own code

ktune_add_gtest(NAME ktune_ops_nvrtc_tests LABEL nvrtc
  SOURCES ops_nvrtc_test.cpp
  LIBS ktune_kernel_templates ktune_harness)

# Carry this executable to the GPU machine (docs/kernels.md, "Operators", gives the command).
ktune_add_gtest(NAME ktune_ops_gpu_tests LABEL gpu
  SOURCES ops_gpu_test.cpp ops_gpu_support.cpp gpu_plan_runner.cpp
  LIBS ktune_kernel_templates ktune_harness ktune_measure_core)
