// Persistent point-to-point requests on buffers Strider moves (GPU memory, or host memory with
// STRIDER_P2P_HOST=pack): MPI_Send_init and its kinds, MPI_Recv_init, their `_c` forms.
// Everything that can be built once is built at init: the object, its wire buffer and shape, and
// the MPI's own persistent request on that wire, which the application holds (so matching,
// cancel and every completion call stay the MPI's). A start takes part in the same-node offers
// as a nonblocking call does (calls/persistent_starts.hpp): a receive offers its buffer, a send
// takes its receiver's offer and writes the data there, sending a notice under a request of
// Strider's own instead of starting the MPI's. Otherwise a start packs a send's object into its
// wire before the MPI starts it (MPI_Startall: the sends by one kernel, transfer::pack_wave); a
// receive's completion unpacks its wire (several at once as an arrival wave, as for MPI_Irecv).
#pragma once

#include <mpi.h>

#include <string_view>

#include "calls/persistent.hpp"
#include "calls/persistent_requests.hpp"
#include "offers/protocol.hpp"
#include "transfer/state.hpp"
#include "transfer/wire.hpp"

namespace strider::calls {

// The wire of a send (or receive) Strider moves, prepared for the MPI's init; `peer.rank` is the
// destination (or source), `tag` the request's. `synchronous`: MPI_Ssend_init.
int prepare_persistent_send(const transfer::Object& object, const transfer::Peer& peer, int tag,
                            bool synchronous, PersistentTransfer& p);
int prepare_persistent_receive(const transfer::Object& object, const transfer::Peer& peer, int tag,
                               PersistentTransfer& p);
// MPI_Send_init, Bsend_init, Ssend_init, Rsend_init (and `_c`): `next` is the MPI's init.
template <class Next, class Count>
int persistent_send_init(Next next, const char* name, const char* instead, const void* buf,
                         Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  // Without a request the MPI refuses the call: nothing to prepare, no stream to leave untrusted.
  if (request == nullptr) return next(buf, count, type, dest, tag, comm, request);
  transfer::Object object;
  const bool served = dest != MPI_PROC_NULL &&
                      transfer::p2p_object(buf, count, type, false, {comm, dest}, object, true);
  // The MPI reads no buffer for an empty message or MPI_PROC_NULL: those go to it as they are.
  if (!served && dest != MPI_PROC_NULL && count != 0 && refuse_persistent({buf})) {
    return persistent_refused(comm, name, instead);
  }
  if (!served) {
    offers::persistent_send(comm, dest, tag);  // its starts are not numbered
    return next(buf, count, type, dest, tag, comm, request);
  }
  auto p = std::make_shared<PersistentTransfer>();
  int rc = prepare_persistent_send(object, {comm, dest}, tag,
                                   std::string_view(name).starts_with("MPI_Ssend"), *p);
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
  // Without a request the MPI refuses the call: nothing to prepare, no stream to leave untrusted.
  if (request == nullptr) return next(buf, count, type, source, tag, comm, request);
  transfer::Object object;
  const bool served = source != MPI_PROC_NULL &&
                      transfer::p2p_object(buf, count, type, true, {comm, source}, object, true);
  if (!served && source != MPI_PROC_NULL && count != 0 && refuse_persistent({buf})) {
    return persistent_refused(comm, name, instead);
  }
  if (!served) {
    // Its starts are not counted (one from MPI_PROC_NULL matches nothing).
    if (source != MPI_PROC_NULL) offers::persistent_receive(comm);
    return next(buf, count, type, source, tag, comm, request);
  }
  auto p = std::make_shared<PersistentTransfer>();
  int rc = prepare_persistent_receive(object, {comm, source}, tag, *p);
  if (rc != MPI_SUCCESS) return rc;
  rc =
      next(p->in.wire.data(), Count{p->in.post.count}, p->in.post.type, source, tag, comm, request);
  if (rc == MPI_SUCCESS) keep_persistent(*request, std::move(p));
  return rc;
}

}  // namespace strider::calls
