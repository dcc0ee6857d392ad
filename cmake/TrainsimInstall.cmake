# Install and export, so that `find_package(trainsim)` gives trainsim::sim (and trainsim::calibrate,
# trainsim::kernels_reference, trainsim::kernels when built) to users who script scenarios in C++.
include(CMakePackageConfigHelpers)
set(TRAINSIM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/trainsim)
install(EXPORT trainsimTargets NAMESPACE trainsim:: DESTINATION ${TRAINSIM_CMAKE_DIR})
configure_package_config_file(cmake/trainsimConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/trainsimConfig.cmake INSTALL_DESTINATION ${TRAINSIM_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/trainsimConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/trainsimConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/trainsimConfigVersion.cmake
        DESTINATION ${TRAINSIM_CMAKE_DIR})
# Example inputs are part of the manual.
install(DIRECTORY scenarios topologies DESTINATION ${CMAKE_INSTALL_DATADIR}/trainsim)
install(DIRECTORY calibrate/profiles DESTINATION ${CMAKE_INSTALL_DATADIR}/trainsim/calibrate)

# trainsim_install_headers(DIR): installs the public headers of a code folder, keeping their path
# relative to the source root (so `#include "sim/config/scenario.h"` works installed and in-tree).
function(trainsim_install_headers dir)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/trainsim
          FILES_MATCHING PATTERN "*.h")
endfunction()
trainsim_install_headers(sim)
trainsim_install_headers(kernels)
trainsim_install_headers(calibrate)
