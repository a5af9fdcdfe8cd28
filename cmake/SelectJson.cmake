# nlohmann-json reads and writes the performance model's perf files, when it can be found: its
# CMake package, the headers, STRIDER_JSON_INCLUDE_DIR or .deps/nlohmann_json. Without it the
# library still builds: the model keeps its built-in defaults and says perf files cannot be read
# in this build. -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON turns all of it off.
include(${CMAKE_CURRENT_LIST_DIR}/FindHeaderLibrary.cmake)
set(STRIDER_JSON_INCLUDE_DIR "" CACHE PATH "Folder holding nlohmann/json.hpp, if not installed")
strider_find_header_library(nlohmann_json nlohmann_json::nlohmann_json nlohmann/json.hpp
                            "${STRIDER_JSON_INCLUDE_DIR}" nlohmann_json STRIDER_HAVE_JSON 3)
if(NOT STRIDER_HAVE_JSON)
  strider_skip_note("perf files unreadable (built-in model defaults), strider-measure skipped: "
                    "nlohmann-json not found (Debian: nlohmann-json3-dev; or "
                    "-DSTRIDER_JSON_INCLUDE_DIR=...)")
endif()
