# nlohmann-json reads and writes the performance model's perf files, when it can be found: its
# CMake package, the headers, STRIDER_JSON_INCLUDE_DIR or .deps/nlohmann_json. Without it the
# library still builds: the model keeps its built-in defaults and says perf files cannot be read
# in this build. -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON turns all of it off.
set(STRIDER_JSON_INCLUDE_DIR "" CACHE PATH "Folder holding nlohmann/json.hpp, if not installed")
set(STRIDER_HAVE_JSON OFF)
find_package(nlohmann_json 3 CONFIG QUIET)
if(nlohmann_json_FOUND)
  set(STRIDER_HAVE_JSON ON)
elseif(NOT CMAKE_DISABLE_FIND_PACKAGE_nlohmann_json)
  find_path(NLOHMANN_JSON_INCLUDE_DIR nlohmann/json.hpp
            HINTS ${STRIDER_JSON_INCLUDE_DIR} ${PROJECT_SOURCE_DIR}/.deps/nlohmann_json)
  if(NLOHMANN_JSON_INCLUDE_DIR)
    add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED GLOBAL)
    target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${NLOHMANN_JSON_INCLUDE_DIR})
    set(STRIDER_HAVE_JSON ON)
  endif()
endif()
if(NOT STRIDER_HAVE_JSON)
  strider_skip_note("perf files unreadable (built-in model defaults), strider-measure skipped: "
                    "nlohmann-json not found (Debian: nlohmann-json3-dev; or "
                    "-DSTRIDER_JSON_INCLUDE_DIR=...)")
endif()
