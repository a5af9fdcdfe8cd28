// The persistent requests Strider serves, from init to MPI_Request_free: point-to-point ones
// (calls/persistent_p2p.hpp) and collectives (MPI-4's MPI_<collective>_init). Each holds the
// MPI's own persistent request on Strider's wires, so MPI_Start's order, matching and every
// completion call stay the MPI's. A start loads the wires before the MPI starts the request; a
// completion unpacks them. Each start tracks an operation under the request until its
// completion, so a request freed while active finishes as any freed request does.
#pragma once

#include <mpi.h>

#include <functional>
#include <initializer_list>
#include <memory>

#include "collective/call.hpp"
#include "collective/form.hpp"
#include "offers/protocol.hpp"
#include "transfer/state.hpp"
#include "transfer/wire.hpp"

namespace strider::calls {

// What a served persistent request keeps from init to MPI_Request_free.
struct PersistentTransfer {
  bool receive = false;
  transfer::Object object;        // a send's, its type a duplicate; a receive's is in `in`
  transfer::HeldType held_type;   // keeps a send's type alive for the staged path
  transfer::Outgoing out;         // a send's wire, packed at each start
  transfer::Incoming in;          // a receive's wire, unpacked at each completion
  MPI_Comm comm = MPI_COMM_NULL;  // where its errors are reported
  // Point-to-point: the destination or source and the tag, for the same-node offers, in which
  // every start takes part (docs/same-node-p2p.md, "Persistent requests"): a receive's is counted
  // and may offer, a send's is numbered and may take an offer, but not a synchronous one's (its
  // completion could not wait for the notice's match).
  int peer = MPI_PROC_NULL;
  int tag = 0;
  bool synchronous = false;
  std::unique_ptr<offers::PendingFill> fill;  // the offer its current start claimed, if any
  // A persistent collective: its sides and wires (the point-to-point fields above unused).
  std::shared_ptr<collective::Call> collective;
};
using PersistentPtr = std::shared_ptr<PersistentTransfer>;

// The MPI created `request` on the prepared wires.
void keep_persistent(MPI_Request request, PersistentPtr p);

// MPI_<collective>_init: `serve(form)` is the collective's body (calls/collectives.hpp) in the
// persistent form, `next()` the MPI's own init on the application's arguments. Served, its
// request is kept; not served (nothing to move here), it goes to the MPI. Where the MPI's own
// persistent collective is unreliable (calls/persistent.hpp) Strider does not serve it: it goes
// to the MPI, or is refused (MPI_ERR_BUFFER, with `instead` named) where one of `buffers` is GPU
// memory the MPI cannot read.
int persistent_collective(MPI_Comm comm, const char* name, const char* instead,
                          std::initializer_list<const void*> buffers, MPI_Info info,
                          MPI_Request* request,
                          const std::function<int(const collective::Form&)>& serve,
                          const std::function<int()>& next);

// MPI_Start / MPI_Startall: the served requests among `requests` loaded (the point-to-point
// sends by one kernel), then `start()`, the MPI's call; once it has started them, each served
// request's start is tracked for its completion (calls/persistent_starts.hpp; with same-node
// offers Strider starts them one by one instead). A load that fails is reported; without offers
// nothing is started then.
int start_persistent(int n, MPI_Request* requests, const std::function<int()>& start);

// MPI_Request_free on a served request: true when it was one (`rc` its result). An inactive one
// is freed with its wires; an active one finishes first, as an orphan (transfer/requests.hpp).
bool free_persistent(MPI_Request* request, int& rc);

// At MPI_Finalize: the wires of requests the application never freed go back to their pools.
void forget_persistent();

}  // namespace strider::calls
