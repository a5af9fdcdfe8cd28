# CLI11 (command lines of the tools and benchmarks), as CLI11::CLI11 for the whole project.
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  # Debian's libcli11-dev is header-only; its CMake package is missing in some releases.
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp HINTS ${STRIDER_CLI11_INCLUDE_DIR} REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED GLOBAL)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()
