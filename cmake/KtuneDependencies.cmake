# Every third-party dependency is found here, once. All come from Debian packages
# (scripts/install-deps.sh) or the CUDA toolkit; a missing one fails loudly.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(muparser REQUIRED)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)

# `ktune serve` (service/): the server on libmicrohttpd (an event loop holding thousands of
# connections, bounded memory each, GnuTLS for --tls-cert); the clients (`cache push`, `query
# --server`) on Debian's cpp-httplib, a compiled library built with OpenSSL, zlib and brotli whose
# pkg-config file carries the matching CPPHTTPLIB_*_SUPPORT definitions (TLS included).
if(KTUNE_WITH_SERVICE)
  pkg_check_modules(MICROHTTPD IMPORTED_TARGET libmicrohttpd)
  if(NOT MICROHTTPD_FOUND)
    message(FATAL_ERROR "KTUNE_WITH_SERVICE=ON but libmicrohttpd was not found (install libmicrohttpd-dev "
                        "with scripts/install-deps.sh, or configure with -DKTUNE_WITH_SERVICE=OFF)")
  endif()
  pkg_check_modules(HTTPLIB IMPORTED_TARGET cpp-httplib)
  if(NOT HTTPLIB_FOUND)
    message(FATAL_ERROR "KTUNE_WITH_SERVICE=ON but cpp-httplib was not found (install libcpp-httplib-dev with "
                        "scripts/install-deps.sh, or configure with -DKTUNE_WITH_SERVICE=OFF)")
  endif()
  find_package(OpenSSL REQUIRED)
endif()

# The toolkit supplies headers only at build time (D2: libcuda, libnvrtc and libcupti are
# opened with dlopen at run time), so no CUDA library is linked.
find_package(CUDAToolkit REQUIRED)
if(NOT EXISTS "${CUDAToolkit_INCLUDE_DIRS}/cudaTypedefs.h")
  message(FATAL_ERROR "CUDA toolkit headers not found (need cudaTypedefs.h in ${CUDAToolkit_INCLUDE_DIRS})")
endif()
add_library(ktune_cuda_headers INTERFACE)
target_include_directories(ktune_cuda_headers SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})

if(KTUNE_WITH_CUPTI AND NOT EXISTS "${CUDAToolkit_INCLUDE_DIRS}/cupti_range_profiler.h")
  message(FATAL_ERROR "KTUNE_WITH_CUPTI=ON but cupti_range_profiler.h is missing in ${CUDAToolkit_INCLUDE_DIRS}; "
                      "install CUPTI or configure with -DKTUNE_WITH_CUPTI=OFF")
endif()

if(KTUNE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(KTUNE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# The project's one Python environment (scripts/install-deps.sh makes .venv from requirements.txt):
# every Python test runs under it.
if(KTUNE_BUILD_TESTS)
  set(KTUNE_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH
    "The Python interpreter of the tests (the project's environment, made by scripts/install-deps.sh)")
  execute_process(COMMAND ${KTUNE_PYTHON} -c "import pytest" RESULT_VARIABLE _no_pytest OUTPUT_QUIET ERROR_QUIET)
  if(_no_pytest)
    message(FATAL_ERROR "${KTUNE_PYTHON} cannot import pytest: run scripts/install-deps.sh (it makes the "
                        "project's Python environment .venv from requirements.txt), or set KTUNE_PYTHON")
  endif()
endif()
