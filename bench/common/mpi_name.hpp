// The MPI implementation a benchmark was built against, for its CSV rows.
#pragma once

#include <mpi.h>

namespace strider::bench {

#if defined(OPEN_MPI)
constexpr const char* kMpiName = "openmpi";
#elif defined(MPICH_VERSION)
constexpr const char* kMpiName = "mpich";
#else
constexpr const char* kMpiName = "unknown";
#endif

}  // namespace strider::bench
