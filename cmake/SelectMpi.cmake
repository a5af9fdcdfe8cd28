# Picks one MPI implementation. Debian installs Open MPI and MPICH side by side under the
# suffixed names mpicc.openmpi / mpicc.mpich; MPI_Datatype differs in ABI between them, so the
# library is built once per implementation (and once more for the MPI-5 standard ABI).
# mpich-wheel and mpich-abi: MPICH 5 from its PyPI wheel in STRIDER_WHEEL_PREFIX
# (scripts/install-wheel-mpi.sh makes .venv-mpi/), built with its own ABI (mpicc) or with the
# MPI-5 standard ABI (mpicc_abi, libmpi_abi.so).
set(STRIDER_WHEEL_PREFIX "${PROJECT_SOURCE_DIR}/.venv-mpi" CACHE PATH
    "The virtual environment holding the MPICH wheel (STRIDER_MPI=mpich-wheel or mpich-abi)")
if(STRIDER_MPI MATCHES "^(openmpi|mpich)$")
  find_program(MPI_C_COMPILER NAMES mpicc.${STRIDER_MPI} REQUIRED)
  find_program(MPI_CXX_COMPILER NAMES mpicxx.${STRIDER_MPI} REQUIRED)
  find_program(MPIEXEC_EXECUTABLE NAMES mpirun.${STRIDER_MPI} mpiexec.${STRIDER_MPI} REQUIRED)
elseif(STRIDER_MPI MATCHES "^mpich-(wheel|abi)$")
  set(_abi "")
  if(STRIDER_MPI STREQUAL "mpich-abi")
    set(_abi "_abi")
  endif()
  set(_bin ${STRIDER_WHEEL_PREFIX}/bin)
  find_program(MPI_C_COMPILER NAMES mpicc${_abi} PATHS ${_bin} NO_DEFAULT_PATH REQUIRED)
  find_program(MPI_CXX_COMPILER NAMES mpicxx${_abi} PATHS ${_bin} NO_DEFAULT_PATH REQUIRED)
  find_program(MPIEXEC_EXECUTABLE NAMES mpiexec PATHS ${_bin} NO_DEFAULT_PATH REQUIRED)
elseif(STRIDER_MPI)
  message(FATAL_ERROR
          "STRIDER_MPI must be openmpi, mpich, mpich-wheel or mpich-abi, not '${STRIDER_MPI}'")
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

# Flags for launching tests: Open MPI refuses root and more ranks than cores unless told, and binds
# each of few ranks to one core, where Strider's progress thread (which needs a CPU to spare) would
# not start: the tests' ranks are left unbound, as MPICH's launcher leaves them.
set(STRIDER_MPIEXEC_FLAGS "")
if(STRIDER_MPI_IS_OPENMPI)
  set(STRIDER_MPIEXEC_FLAGS --oversubscribe --allow-run-as-root --bind-to none)
  set(STRIDER_MPI_NAME openmpi)
elseif(STRIDER_MPI MATCHES "^mpich-(wheel|abi)$")
  set(STRIDER_MPI_NAME ${STRIDER_MPI})
else()
  set(STRIDER_MPI_NAME mpich)
endif()
message(STATUS "Strider: MPI ${STRIDER_MPI_NAME} (${MPI_C_COMPILER}), launcher ${MPIEXEC_EXECUTABLE}")

# The C API only: keep the deprecated C++ bindings out of every C++ translation unit.
add_compile_definitions(OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
