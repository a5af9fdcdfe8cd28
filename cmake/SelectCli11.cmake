# CLI11 (command lines of strider-measure and some benchmarks), as CLI11::CLI11 for the whole
# project, when it can be found: its CMake package, the headers (Debian's libcli11-dev lacks the
# package in some releases), STRIDER_CLI11_INCLUDE_DIR or .deps/CLI11. STRIDER_HAVE_CLI11 says.
# -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON turns all of it off (to see a machine without it).
set(STRIDER_CLI11_INCLUDE_DIR "" CACHE PATH "Folder holding CLI/CLI.hpp, if not installed")
set(STRIDER_HAVE_CLI11 OFF)
find_package(CLI11 CONFIG QUIET)
if(CLI11_FOUND)
  set(STRIDER_HAVE_CLI11 ON)
elseif(NOT CMAKE_DISABLE_FIND_PACKAGE_CLI11)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp
            HINTS ${STRIDER_CLI11_INCLUDE_DIR} ${PROJECT_SOURCE_DIR}/.deps/CLI11)
  if(CLI11_INCLUDE_DIR)
    add_library(CLI11::CLI11 INTERFACE IMPORTED GLOBAL)
    target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
    set(STRIDER_HAVE_CLI11 ON)
  endif()
endif()
if(NOT STRIDER_HAVE_CLI11)
  strider_skip_note("strider-measure, bench/select and bench/validate skipped: CLI11 not found "
                    "(Debian: libcli11-dev; or -DSTRIDER_CLI11_INCLUDE_DIR=...)")
endif()
