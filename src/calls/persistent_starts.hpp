// MPI_Start and MPI_Startall on the persistent requests Strider serves, and the operation each
// start tracks under its request until its completion.
#pragma once

#include <mpi.h>

#include <functional>
#include <span>

#include "calls/persistent_requests.hpp"

namespace strider::calls {

// Starts the `served.size()` requests at `requests` (`served[i]`: what Strider keeps for
// requests[i], or null where it does not serve it); `start()` is the MPI's own call on them all.
// - Where no point-to-point request among them is on a communicator with same-node offers: the
//   sends are packed (one kernel), the collectives loaded, then `start()` starts everything.
// - Otherwise Strider starts them one by one, receives first (MPI_Startall starts its requests "in
//   some arbitrary order", and a receive's offer must exist before this process's own sends
//   look for it): each receive counted by the receive ledger, started, then offered; then, in
//   the array's order, the rest, each send numbered and, where it claimed its receiver's offer,
//   written there (one kernel for all such writes) and replaced by a notice.
// A load that fails is reported; the first error is returned.
int start_served(std::span<const PersistentPtr> served, MPI_Request* requests,
                 const std::function<int()>& start);

}  // namespace strider::calls
