// Persistent point-to-point requests on buffers Strider moves (GPU memory, or host memory with
// STRIDER_P2P_HOST=pack): MPI_Send_init and its kinds, MPI_Recv_init, their `_c` forms.
// Everything that can be built once is built at init: the object, its wire buffer and shape, and
// the MPI's own persistent request on that wire, which the application holds (so matching,
// MPI_Start's order, cancel and every completion call stay the MPI's). A start packs a send's
// object into its wire before the MPI starts it (MPI_Startall: the sends by one kernel,
// transfer::pack_wave); a receive's completion unpacks its wire (several at once as an arrival
// wave, as for MPI_Irecv). Each start tracks an operation under the request until its
// completion, so a request freed while active finishes as any freed request does.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>

#include "calls/persistent.hpp"
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
};
using PersistentPtr = std::shared_ptr<PersistentTransfer>;

// The wire of a send (or receive) Strider moves, prepared for the MPI's init.
int prepare_persistent_send(const transfer::Object& object, const transfer::Peer& peer,
                            PersistentTransfer& p);
int prepare_persistent_receive(const transfer::Object& object, const transfer::Peer& peer,
                               PersistentTransfer& p);
// The MPI created `request` on the prepared wire.
void keep_persistent(MPI_Request request, PersistentPtr p);

// MPI_Send_init, Bsend_init, Ssend_init, Rsend_init (and `_c`): `next` is the MPI's init.
template <class Next, class Count>
int persistent_send_init(Next next, const char* name, const char* instead, const void* buf,
                         Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  transfer::Object object;
  const bool served =
      dest != MPI_PROC_NULL && transfer::p2p_object(buf, count, type, false, {comm, dest}, object);
  // The MPI reads no buffer for an empty message or MPI_PROC_NULL: those go to it as they are.
  if (!served && dest != MPI_PROC_NULL && count != 0 && refuse_persistent({buf}, false)) {
    return persistent_refused(comm, name, instead);
  }
  offers::persistent_send(comm, dest, tag);  // its starts are not numbered
  if (!served) return next(buf, count, type, dest, tag, comm, request);
  auto p = std::make_shared<PersistentTransfer>();
  int rc = prepare_persistent_send(object, {comm, dest}, *p);
  if (rc != MPI_SUCCESS) return rc;
  rc = next(p->out.wire.data(), Count{p->out.shape.count}, p->out.shape.type, dest, tag, comm,
            request);
  if (rc == MPI_SUCCESS) keep_persistent(*request, std::move(p));
  return rc;
}

// MPI_Recv_init (and `_c`).
template <class Next, class Count>
int persistent_recv_init(Next next, const char* name, const char* instead, void* buf, Count count,
                         MPI_Datatype type, int source, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  transfer::Object object;
  const bool served = source != MPI_PROC_NULL &&
                      transfer::p2p_object(buf, count, type, true, {comm, source}, object);
  if (!served && source != MPI_PROC_NULL && count != 0 && refuse_persistent({buf}, false)) {
    return persistent_refused(comm, name, instead);
  }
  offers::persistent_receive(comm);  // its starts are not counted
  if (!served) return next(buf, count, type, source, tag, comm, request);
  auto p = std::make_shared<PersistentTransfer>();
  int rc = prepare_persistent_receive(object, {comm, source}, *p);
  if (rc != MPI_SUCCESS) return rc;
  rc =
      next(p->in.wire.data(), Count{p->in.post.count}, p->in.post.type, source, tag, comm, request);
  if (rc == MPI_SUCCESS) keep_persistent(*request, std::move(p));
  return rc;
}

// MPI_Start / MPI_Startall: the served sends among `requests` packed (together where they can
// be), then `start()`, the MPI's call; once it has started them, each served request's start is
// tracked for its completion. A pack that fails is reported and nothing is started.
int start_persistent(int n, MPI_Request* requests, const std::function<int()>& start);

// MPI_Request_free on a served request: true when it was one (`rc` its result). An inactive one
// is freed with its wire; an active one finishes first, as an orphan (transfer/requests.hpp).
bool free_persistent(MPI_Request* request, int& rc);

// At MPI_Finalize: the wires of requests the application never freed go back to their pools.
void forget_persistent();

}  // namespace strider::calls
