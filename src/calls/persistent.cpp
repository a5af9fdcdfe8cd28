#include "calls/persistent.hpp"

#include "runtime/log.hpp"
#include "runtime/memory_kind.hpp"
#include "transfer/cuda_aware.hpp"
#include "transfer/settings.hpp"
#include "transfer/state.hpp"

namespace strider::calls {

bool refuse_persistent(std::initializer_list<const void*> buffers, bool collective) {
  const transfer::Settings& config = transfer::settings();
  if (config.disabled || transfer::mpi_cuda_aware()) return false;
  // Every rank alike, also one whose buffers are all insignificant (a rank outside the root's
  // group of an intercommunicator).
  if (collective && config.host_collectives == runtime::HostPath::Pack) return true;
  for (const void* b : buffers) {
    if (b == nullptr || b == MPI_IN_PLACE || b == MPI_BOTTOM) continue;
    if (!runtime::host_accessible(runtime::pointer_info(b).kind)) return true;
  }
  return false;
}

int persistent_refused(MPI_Comm comm, const char* name, const char* instead) {
  // The first refusal is an error line; the rest are counted (strider_stats) and logged only
  // at debug level, since a loop of refused calls would flood stderr.
  const bool first = transfer::counters().persistent_refused++ == 0;
  runtime::log(first ? runtime::LogLevel::Error : runtime::LogLevel::Debug,
               "%s: persistent requests are not served on GPU memory (nor, for collectives with "
               "STRIDER_COLL_HOST=pack, on host memory) and the MPI is not CUDA-aware: use %s",
               name, instead);
  PMPI_Comm_call_errhandler(comm, MPI_ERR_BUFFER);
  return MPI_ERR_BUFFER;
}

}  // namespace strider::calls
