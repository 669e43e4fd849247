# Install rules and the exported package: find_package(porta) gives porta::porta.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS porta EXPORT portaTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/porta DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT portaTargets NAMESPACE porta:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/porta)

configure_package_config_file(cmake/portaConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/portaConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/porta)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/portaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/portaConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/portaConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/porta)
