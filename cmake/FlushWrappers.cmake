# The flush wrappers (docs/bursts.md, B2): every MPI entry point that libstrider.so does not
# serve, generated from the MPI's own mpi.h by cmake/flush_wrappers.py as a weak definition that
# starts the deferred sends and calls the MPI. Sets STRIDER_FLUSH_WRAPPERS_SOURCE (the generated
# file, empty when it could not be made: no Python 3 or no preprocessor) and
# STRIDER_HAVE_FLUSH_WRAPPERS (0 or 1: without them Strider never defers a send).
set(STRIDER_FLUSH_WRAPPERS_SOURCE "")
set(STRIDER_HAVE_FLUSH_WRAPPERS 0)
set(_flush_dir ${CMAKE_CURRENT_BINARY_DIR}/flush_wrappers)
set(_flush_script ${PROJECT_SOURCE_DIR}/cmake/flush_wrappers.py)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_flush_script})
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  file(WRITE ${_flush_dir}/mpi_header.c "#include <mpi.h>\n")
  set(_flush_flags "")
  foreach(dir IN LISTS MPI_C_INCLUDE_DIRS)
    list(APPEND _flush_flags -I${dir})
  endforeach()
  # The MPI-5 ABI build's mpicc_abi selects its header by a definition (MPI_ABI).
  foreach(def IN LISTS MPI_C_COMPILE_DEFINITIONS)
    list(APPEND _flush_flags -D${def})
  endforeach()
  execute_process(
    COMMAND ${CMAKE_C_COMPILER} -E -P ${_flush_flags} ${_flush_dir}/mpi_header.c
    OUTPUT_FILE ${_flush_dir}/mpi_header.i RESULT_VARIABLE _flush_pp ERROR_VARIABLE _flush_err)
  if(_flush_pp EQUAL 0)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} ${_flush_script} ${_flush_dir}/mpi_header.i
              ${_flush_dir}/flush_wrappers.cpp
      RESULT_VARIABLE _flush_gen OUTPUT_VARIABLE _flush_said ERROR_VARIABLE _flush_err
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_flush_gen EQUAL 0)
      set(STRIDER_FLUSH_WRAPPERS_SOURCE ${_flush_dir}/flush_wrappers.cpp)
      set(STRIDER_HAVE_FLUSH_WRAPPERS 1)
    endif()
  endif()
endif()
if(STRIDER_HAVE_FLUSH_WRAPPERS)
  message(STATUS "Strider: ${_flush_said}")
else()
  message(WARNING "Strider: no flush wrappers (${_flush_err}); nonblocking sends are never "
                  "deferred")
endif()
