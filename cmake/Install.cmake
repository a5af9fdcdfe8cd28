# cmake --install: lib/libstrider.so, headers, tools, a CMake package (find_package(Strider)
# -> Strider::strider) and strider.pc.
include(CMakePackageConfigHelpers)

install(TARGETS strider EXPORT StriderTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/strider
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(STRIDER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Strider)
install(EXPORT StriderTargets NAMESPACE Strider:: DESTINATION ${STRIDER_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/StriderConfig.cmake.in
  ${PROJECT_BINARY_DIR}/StriderConfig.cmake INSTALL_DESTINATION ${STRIDER_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/StriderConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/StriderConfig.cmake
              ${PROJECT_BINARY_DIR}/StriderConfigVersion.cmake
        DESTINATION ${STRIDER_CMAKE_DIR})

configure_file(${PROJECT_SOURCE_DIR}/cmake/strider.pc.in ${PROJECT_BINARY_DIR}/strider.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/strider.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
