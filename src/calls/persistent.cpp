#include "calls/persistent.hpp"

#include <cstring>

#include "runtime/log.hpp"
#include "runtime/memory_kind.hpp"
#include "runtime/mpi_library.hpp"
#include "transfer/cuda_aware.hpp"
#include "transfer/settings.hpp"
#include "transfer/state.hpp"

namespace strider::calls {

bool refuse_persistent(std::initializer_list<const void*> buffers) {
  const transfer::Settings& config = transfer::settings();
  if (config.disabled || transfer::mpi_cuda_aware()) return false;
  for (const void* b : buffers) {
    if (b == nullptr || b == MPI_IN_PLACE || b == MPI_BOTTOM) continue;
    if (!runtime::host_accessible(runtime::pointer_info(b).kind)) return true;
  }
  return false;
}

namespace {

// Whether `name` is the MPI function `classic` or its large-count form (`classic` + "_c").
bool is_call(const char* name, const char* classic) {
  const std::size_t n = std::strlen(classic);
  return std::strncmp(name, classic, n) == 0 &&
         (name[n] == '\0' || std::strcmp(name + n, "_c") == 0);
}

}  // namespace

bool mpi_persistent_collective_unreliable(const char* name, MPI_Comm comm) {
  const runtime::MpiLibrary& mpi = runtime::mpi_library();
  if (mpi.family != runtime::MpiFamily::Mpich || mpi.major > 4 ||
      (mpi.major == 4 && mpi.minor >= 3))
    return false;
  if (is_call(name, "MPI_Gather_init") || is_call(name, "MPI_Scatter_init")) return true;
  int inter = 0;
  return is_call(name, "MPI_Allgather_init") && comm != MPI_COMM_NULL &&
         PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter != 0;
}

int persistent_refused(MPI_Comm comm, const char* name, const char* instead) {
  // The first refusal is an error line; the rest are counted (strider_stats) and logged only
  // at debug level, since a loop of refused calls would flood stderr.
  const bool first = transfer::counters().persistent_refused++ == 0;
  runtime::log(first ? runtime::LogLevel::Error : runtime::LogLevel::Debug,
               "%s: Strider does not serve this persistent call here (a datatype it cannot read, "
               "or an MPI whose own is unreliable) and its GPU buffers would reach an MPI that "
               "is not CUDA-aware: use %s",
               name, instead);
  PMPI_Comm_call_errhandler(comm, MPI_ERR_BUFFER);
  return MPI_ERR_BUFFER;
}

}  // namespace strider::calls
