#include "calls/lifecycle.hpp"

#include "collective/same_node.hpp"
#include "collective/wire_types.hpp"
#include "ipc/wire_buffers.hpp"
#include "ipc/wire_ipc.hpp"
#include "offers/protocol.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "transfer/requests.hpp"
#include "transfer/state.hpp"

namespace strider::calls {

void on_init() {
  transfer::start();
  offers::start();
  runtime::log(runtime::LogLevel::Info, "Strider active (host engine %s)",
               runtime::to_string(runtime::config().host_engine));
}

void on_finalize() {
  // Operations whose requests the application freed finish before the MPI goes away.
  transfer::requests().drain_orphans();
  ipc::trim_pools();
  offers::stop();
  collective::free_wire_types();
  collective::free_same_node_keyval();
  ipc::close_wire_imports();
  transfer::stop();
}

}  // namespace strider::calls
