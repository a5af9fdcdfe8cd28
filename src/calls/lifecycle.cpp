#include "calls/lifecycle.hpp"

#include "calls/persistent_requests.hpp"
#include "collective/same_node.hpp"
#include "collective/wire_types.hpp"
#include "ipc/wire_buffers.hpp"
#include "ipc/wire_ipc.hpp"
#include "offers/protocol.hpp"
#include "runtime/log.hpp"
#include "runtime/mpi_library.hpp"
#include "transfer/requests.hpp"
#include "transfer/settings.hpp"
#include "transfer/state.hpp"
#include "transfer/wire_shape.hpp"

namespace strider::calls {

void on_init() {
  int provided = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&provided);
  transfer::requests().set_single_caller(provided != MPI_THREAD_MULTIPLE);
  transfer::start();
  offers::start();
  const runtime::MpiLibrary& mpi = runtime::mpi_library();
  runtime::log(runtime::LogLevel::Info,
               "Strider active on %s %d.%d.%d (\"%s\"), built for the %s ABI; host engine %s",
               runtime::to_string(mpi.family), mpi.major, mpi.minor, mpi.patch, mpi.name.c_str(),
               runtime::built_abi(), runtime::to_string(transfer::settings().host_engine));
}

void on_finalize() {
  // Operations whose requests the application freed finish before the MPI goes away.
  transfer::requests().drain_orphans();
  forget_persistent();
  ipc::trim_pools();
  offers::stop();
  collective::free_wire_types();
  collective::free_same_node_keyval();
  ipc::close_wire_imports();
  transfer::free_holed_types();
  transfer::stop();
}

}  // namespace strider::calls
