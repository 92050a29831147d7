# `cmake --install`: headers (with the generated ktune/version.h), libktune_runtime.so, libktune.so,
# the `ktune` executable, the configs (share/ktune/configs), the Python package, the CMake package (ktuneConfig.cmake, its version file, the exported
# targets ktune::runtime and ktune::capi) and a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(ktune_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(ktune_capi PROPERTIES EXPORT_NAME capi)
install(TARGETS ktune_runtime ktune_capi EXPORT ktuneTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ktune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The config spaces, presets and shape sets: the installed `ktune` reads them from here
# (tuner/inputs/shape_set.cpp, configs_dir()).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ktune/configs)
# The Python package (pure Python over ctypes) under <prefix>/lib/python3.X/site-packages: with that
# folder on PYTHONPATH, `import ktune` finds <prefix>/lib's libraries itself (python/ktune/_library.py
# looks in the lib folders above the package).
find_package(Python3 3.9 COMPONENTS Interpreter)
if(Python3_FOUND)
  set(KTUNE_PYTHON_SITE "lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages" CACHE STRING
    "Where `cmake --install` puts the Python package, under the prefix")
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/ktune DESTINATION ${KTUNE_PYTHON_SITE}
    PATTERN __pycache__ EXCLUDE)
endif()
install(FILES
    ${PROJECT_SOURCE_DIR}/include/ktune/ktune.h
    ${PROJECT_SOURCE_DIR}/include/ktune/ktune_runtime.h
    ${PROJECT_SOURCE_DIR}/include/ktune/ktune.hpp
    ${PROJECT_SOURCE_DIR}/include/ktune/error.hpp
    ${PROJECT_SOURCE_DIR}/include/ktune/dtype.hpp
    ${PROJECT_BINARY_DIR}/include/ktune/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ktune)

set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ktune)
install(EXPORT ktuneTargets NAMESPACE ktune:: DESTINATION ${_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/templates/ktuneConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ktuneConfig.cmake INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ktuneConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ktuneConfig.cmake ${PROJECT_BINARY_DIR}/ktuneConfigVersion.cmake
  DESTINATION ${_cmake_dir})

# @ONLY at install time, so the pkg-config file names the prefix the tree is installed to.
install(CODE "
  set(CMAKE_INSTALL_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(CMAKE_INSTALL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(CMAKE_INSTALL_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/cmake/templates/ktune.pc.in\"
    \"${PROJECT_BINARY_DIR}/ktune.pc\" @ONLY)")
install(FILES ${PROJECT_BINARY_DIR}/ktune.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
