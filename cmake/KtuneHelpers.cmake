# ktune_warnings(target): the project's warning set.
function(ktune_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wno-missing-field-initializers)  # GCC 12 flags designated initializers that leave fields at their defaults
endfunction()

# ktune_unoptimized_test(target): -O0 for a test (or CLI) target when KTUNE_UNOPTIMIZED_TESTS is on
# (the asan preset); ktune_optimized_test(target) puts the build type's -O1 back for a test target
# whose own code does the heavy work.
function(ktune_unoptimized_test target)
  if(KTUNE_UNOPTIMIZED_TESTS)
    target_compile_options(${target} PRIVATE -O0)
  endif()
endfunction()
function(ktune_optimized_test target)
  if(KTUNE_UNOPTIMIZED_TESTS)
    target_compile_options(${target} PRIVATE -O1)
  endif()
endfunction()

# ktune_add_gtest(NAME name LABEL unit|nvrtc|gpu|e2e SOURCES ... LIBS ...)
# One GoogleTest executable registered with ctest under one label.
function(ktune_add_gtest)
  cmake_parse_arguments(T "" "NAME;LABEL;TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(T_LABEL STREQUAL "gpu" AND NOT KTUNE_BUILD_GPU_PROGRAMS)
    # Defined (so the target_* calls after it hold) but neither built by default nor registered.
    add_executable(${T_NAME} EXCLUDE_FROM_ALL ${T_SOURCES})
    target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
    return()
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  ktune_warnings(${T_NAME})
  ktune_unoptimized_test(${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABEL}" TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "KTUNE_SOURCE_DIR=${PROJECT_SOURCE_DIR};KTUNE_BINARY_DIR=${PROJECT_BINARY_DIR}")
  if(T_LABEL STREQUAL "nvrtc")
    # NVRTC suites are the longest (tens of seconds of compiles each): ctest -j starts them first so
    # that the short suites fill the other cores instead of waiting behind them at the end.
    set_tests_properties(${T_NAME} PROPERTIES COST 60)
  endif()
  if(T_LABEL STREQUAL "gpu")
    # A gpu suite on a machine without a usable GPU skips every test with one of these reasons: ctest
    # then reports it Skipped, never Passed.
    set_tests_properties(${T_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION
      "no usable GPU;needs a GPU;no usable CUDA device;no CUDA device")
  endif()
endfunction()

# ktune_embed_files(TARGET target OUTPUT file.cpp NAMESPACE ns HEADER dir/header.hpp FILES ...)
# Embeds FILES into `target` at build time (cmake/embed_files.cmake writes OUTPUT, regenerated when
# a file changes): <ns>::kEmbeddedFiles and <ns>::kEmbeddedFileCount, declared in HEADER.
function(ktune_embed_files)
  cmake_parse_arguments(E "" "TARGET;OUTPUT;NAMESPACE;HEADER;COMMENT" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${E_OUTPUT}
    COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${E_OUTPUT}" "-DFILES=${E_FILES}" "-DNAMESPACE=${E_NAMESPACE}"
            "-DHEADER=${E_HEADER}" -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${E_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "${E_COMMENT}"
    VERBATIM)
  target_sources(${E_TARGET} PRIVATE ${E_OUTPUT})
endfunction()
