# The measurement harness (issue 3), included from harness/CMakeLists.txt.
#   ktune_measure_core: no CUDA at all — statistics, stopping rule, options, dtypes, tolerances,
#                       verification math, outcomes, candidate types, worker protocol and the
#                       parent-side worker process/runner. Unit-testable on any machine.
#   ktune_measure:      the worker-side GPU paths (timing, flush, random fill, compare, CUPTI,
#                       NVML, cuBLASLt, ceilings, the built-in copy kernel) on top of ktune_harness.
add_library(ktune_measure_core
  timing_options.cpp
  statistics.cpp
  stopping_rule.cpp
  dtype.cpp
  tolerance.cpp
  verification.cpp
  candidate.cpp
  worker_protocol.cpp
  worker_process.cpp
  candidate_runner.cpp
  retime.cpp
)
target_include_directories(ktune_measure_core PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(ktune_measure_core
  PUBLIC ktune_public_headers nlohmann_json::nlohmann_json
  PRIVATE fmt::fmt Threads::Threads)
ktune_warnings(ktune_measure_core)

add_library(ktune_measure
  utility_kernels.cpp
  random_fill.cpp
  poison.cpp
  gpu_compare.cpp
  l2_flush.cpp
  timer.cpp
  nvml.cpp
  candidate_launch.cpp
  candidate_sequence.cpp
  candidate_measure.cpp
  worker_main.cpp
  copy_kernel.cpp
  ceilings.cpp
)
if(KTUNE_WITH_CUPTI)
  target_sources(ktune_measure PRIVATE cupti_activity.cpp cupti_profiler.cpp)
else()
  target_sources(ktune_measure PRIVATE cupti_unavailable.cpp)
endif()
target_include_directories(ktune_measure PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(ktune_measure
  PUBLIC ktune_measure_core ktune_harness
  PRIVATE fmt::fmt ${CMAKE_DL_LIBS} Threads::Threads)
ktune_warnings(ktune_measure)
