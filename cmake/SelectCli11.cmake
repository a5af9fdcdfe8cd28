# CLI11 (command lines of strider-measure and some benchmarks), as CLI11::CLI11 for the whole
# project, when it can be found: its CMake package, the headers (Debian's libcli11-dev lacks the
# package in some releases), STRIDER_CLI11_INCLUDE_DIR or .deps/CLI11. STRIDER_HAVE_CLI11 says.
# -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON turns all of it off (to see a machine without it).
include(${CMAKE_CURRENT_LIST_DIR}/FindHeaderLibrary.cmake)
set(STRIDER_CLI11_INCLUDE_DIR "" CACHE PATH "Folder holding CLI/CLI.hpp, if not installed")
strider_find_header_library(CLI11 CLI11::CLI11 CLI/CLI.hpp "${STRIDER_CLI11_INCLUDE_DIR}" CLI11
                            STRIDER_HAVE_CLI11)
if(NOT STRIDER_HAVE_CLI11)
  strider_skip_note("strider-measure, bench/select and bench/validate skipped: CLI11 not found "
                    "(Debian: libcli11-dev; or -DSTRIDER_CLI11_INCLUDE_DIR=...)")
endif()
