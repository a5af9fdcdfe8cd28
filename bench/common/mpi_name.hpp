// The MPI implementation a benchmark runs on, for its CSV rows: asked at run time
// (MPI_Get_library_version), so that a build for the MPI-5 standard ABI names the MPI it met,
// and whether it reads GPU memory itself (MPIX_Query_cuda_support, found by name: Open MPI and
// MPICH both have it, and a benchmark must not link an extension some MPIs lack).
#pragma once

#include <dlfcn.h>
#include <mpi.h>

#include <cstring>

namespace strider::bench {

// True when the MPI says it is CUDA-aware: then a benchmark can also time it alone on device
// buffers (through PMPI_*, which Strider does not interpose).
inline bool mpi_cuda_aware() {
  using Query = int (*)();
  const auto query = reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support"));
  return query != nullptr && query() == 1;
}

// "openmpi" or "mpich", with "-cuda" where the MPI is CUDA-aware; "unknown" otherwise.
inline const char* mpi_name() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  const bool aware = mpi_cuda_aware();
  if (std::strncmp(text, "Open MPI", 8) == 0) return aware ? "openmpi-cuda" : "openmpi";
  if (std::strstr(text, "MPICH") != nullptr) return aware ? "mpich-cuda" : "mpich";
  return "unknown";
}

}  // namespace strider::bench
