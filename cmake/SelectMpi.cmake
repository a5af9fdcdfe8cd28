# Picks one MPI implementation. Debian installs Open MPI and MPICH side by side under the
# suffixed names mpicc.openmpi / mpicc.mpich; MPI_Datatype differs in ABI between them, so the
# library is built once per implementation.
if(STRIDER_MPI)
  if(NOT STRIDER_MPI MATCHES "^(openmpi|mpich)$")
    message(FATAL_ERROR "STRIDER_MPI must be openmpi or mpich, not '${STRIDER_MPI}'")
  endif()
  find_program(MPI_C_COMPILER NAMES mpicc.${STRIDER_MPI} REQUIRED)
  find_program(MPI_CXX_COMPILER NAMES mpicxx.${STRIDER_MPI} REQUIRED)
  find_program(MPIEXEC_EXECUTABLE NAMES mpirun.${STRIDER_MPI} mpiexec.${STRIDER_MPI} REQUIRED)
endif()
find_package(MPI 3.1 REQUIRED COMPONENTS C CXX)

# Which implementation we got decides launcher flags and marker support.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
check_c_source_compiles("#include <mpi.h>
int main(void) { MPI_Datatype t = MPI_LB; (void)t; return 0; }" STRIDER_HAVE_MPI_LB)
check_c_source_compiles("#include <mpi.h>
#ifndef OPEN_MPI
#error not Open MPI
#endif
int main(void) { return 0; }" STRIDER_MPI_IS_OPENMPI)
# MPI-4 large-count point-to-point (MPI_Send_c, ...): MPICH 4 has it, Open MPI 4.1 does not.
check_c_source_compiles("#include <mpi.h>
int main(void) { return MPI_Send_c(0, (MPI_Count)0, MPI_BYTE, 0, 0, MPI_COMM_WORLD); }"
                        STRIDER_HAVE_MPI4_P2P)
# MPI-4 persistent collectives (MPI_Alltoall_init, ...): MPICH 4 has them, Open MPI 4.1 does not.
check_c_source_compiles("#include <mpi.h>
int main(void) { MPI_Request r; return MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r); }"
                        STRIDER_HAVE_MPI4_PERSISTENT_COLL)
unset(CMAKE_REQUIRED_LIBRARIES)
if(STRIDER_HAVE_MPI4_P2P)
  add_compile_definitions(STRIDER_HAVE_MPI4_P2P=1)
else()
  add_compile_definitions(STRIDER_HAVE_MPI4_P2P=0)
endif()
if(STRIDER_HAVE_MPI4_PERSISTENT_COLL)
  add_compile_definitions(STRIDER_HAVE_MPI4_PERSISTENT_COLL=1)
else()
  add_compile_definitions(STRIDER_HAVE_MPI4_PERSISTENT_COLL=0)
endif()
if(STRIDER_HAVE_MPI_LB)
  add_compile_definitions(STRIDER_HAVE_MPI_LB=1)
else()
  add_compile_definitions(STRIDER_HAVE_MPI_LB=0)
endif()

# Flags for launching tests: Open MPI refuses root and more ranks than cores unless told.
set(STRIDER_MPIEXEC_FLAGS "")
if(STRIDER_MPI_IS_OPENMPI)
  set(STRIDER_MPIEXEC_FLAGS --oversubscribe --allow-run-as-root)
  set(STRIDER_MPI_NAME openmpi)
else()
  set(STRIDER_MPI_NAME mpich)
endif()
message(STATUS "Strider: MPI ${STRIDER_MPI_NAME} (${MPI_C_COMPILER}), launcher ${MPIEXEC_EXECUTABLE}")

# The C API only: keep the deprecated C++ bindings out of every C++ translation unit.
add_compile_definitions(OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
