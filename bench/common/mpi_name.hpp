// The MPI implementation a benchmark runs on, for its CSV rows: asked at run time
// (MPI_Get_library_version), so that a build for the MPI-5 standard ABI names the MPI it met.
#pragma once

#include <mpi.h>

#include <cstring>

namespace strider::bench {

inline const char* mpi_name() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  if (std::strncmp(text, "Open MPI", 8) == 0) return "openmpi";
  if (std::strstr(text, "MPICH") != nullptr) return "mpich";
  return "unknown";
}

}  // namespace strider::bench
