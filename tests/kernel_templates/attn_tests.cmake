# decode_attention's suites, included by this folder's CMakeLists.txt: unit (CPU
# reference by hand, spec, default space over the shape sets, the template emulated on the
# CPU), nvrtc (a sample compiles for sm_80 and sm_90), gpu (skips without a device); its
# benchmark, ktune_attn_bench, is in bench/kernels.
ktune_add_gtest(NAME ktune_attn_nvrtc_tests LABEL nvrtc
  SOURCES decode_attention_nvrtc_test.cpp
  LIBS ktune_kernel_templates ktune_harness)

# The splitkv template and its GPU reference run on the CPU (emulation/): split, tail and combine
# bugs show up without a GPU. (The mma template's tensor-core instructions are not emulated: its
# samples run in the gpu suite.)
set(KTUNE_EMULATED_ATTN
  ${PROJECT_SOURCE_DIR}/kernel_templates/common/ops_reduce.cuh
  ${PROJECT_SOURCE_DIR}/kernel_templates/decode_attention/decode_attention_split.cuh
  ${PROJECT_SOURCE_DIR}/kernel_templates/decode_attention/decode_attention.cu
  ${PROJECT_SOURCE_DIR}/kernel_templates/decode_attention/decode_attention_reference.cu)
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/emulation/attn_templates_emulated.hpp
  COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${CMAKE_CURRENT_BINARY_DIR}/emulation/attn_templates_emulated.hpp"
          "-DFILES=${KTUNE_EMULATED_ATTN}" -P ${CMAKE_CURRENT_SOURCE_DIR}/emulation/emulate_ops.cmake
  DEPENDS ${KTUNE_EMULATED_ATTN} ${CMAKE_CURRENT_SOURCE_DIR}/emulation/emulate_ops.cmake
  VERBATIM)
ktune_add_gtest(NAME ktune_attn_emulation_tests LABEL unit
  SOURCES emulation/attn_emulation_test.cpp ${CMAKE_CURRENT_BINARY_DIR}/emulation/attn_templates_emulated.hpp
  LIBS ktune_kernel_templates Threads::Threads)
target_include_directories(ktune_attn_emulation_tests PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/emulation ${CMAKE_CURRENT_BINARY_DIR}/emulation)
# CUDA-style device code: the host warning set does not apply; its vector-load idioms break strict
# aliasing (ops_tests.cmake).
target_compile_options(ktune_attn_emulation_tests PRIVATE -w -fno-strict-aliasing)
ktune_optimized_test(ktune_attn_emulation_tests)  # the emulated kernels run in this target's own code

ktune_add_gtest(NAME ktune_attn_unit_tests LABEL unit
  SOURCES decode_attention_f64_test.cpp decode_attention_spec_test.cpp
  LIBS ktune_kernel_templates tomlplusplus::tomlplusplus)

# The default space against the spec over the shipped shape set (needs the tuner's space reader).
ktune_add_gtest(NAME ktune_attn_space_tests LABEL unit
  SOURCES decode_attention_space_test.cpp
  LIBS ktune_kernel_templates ktune_tuner)
target_compile_definitions(ktune_attn_space_tests PRIVATE KTUNE_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# Carry to the GPU machine (docs/kernels.md, "decode_attention", gives the command).
ktune_add_gtest(NAME ktune_attn_gpu_tests LABEL gpu
  SOURCES decode_attention_gpu_test.cpp ops_gpu_support.cpp gpu_plan_runner.cpp
  LIBS ktune_kernel_templates ktune_harness ktune_measure_core)
