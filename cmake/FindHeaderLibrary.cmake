# strider_find_header_library(<package> <target> <header> <hint-dir> <deps-subdir> <have-var>
#                             [find_package arguments...])
# A header-only library as <target> for the whole project, when it can be found: its CMake
# package, else its headers (installed, in <hint-dir>, or in .deps/<deps-subdir>). Sets
# <have-var> ON or OFF. -DCMAKE_DISABLE_FIND_PACKAGE_<package>=ON turns all of it off (to see a
# machine without it).
function(strider_find_header_library package target header hint subdir have)
  set(${have} OFF PARENT_SCOPE)
  find_package(${package} ${ARGN} CONFIG QUIET)
  if(${package}_FOUND)
    set(${have} ON PARENT_SCOPE)
  elseif(NOT CMAKE_DISABLE_FIND_PACKAGE_${package})
    find_path(${package}_HEADER_DIR ${header} HINTS ${hint} ${PROJECT_SOURCE_DIR}/.deps/${subdir})
    if(${package}_HEADER_DIR)
      add_library(${target} INTERFACE IMPORTED GLOBAL)
      target_include_directories(${target} INTERFACE ${${package}_HEADER_DIR})
      set(${have} ON PARENT_SCOPE)
    endif()
  endif()
endfunction()
