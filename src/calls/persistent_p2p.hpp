// Persistent point-to-point requests on buffers Strider moves (GPU memory, or host memory with
// STRIDER_P2P_HOST=pack): MPI_Send_init and its kinds, MPI_Recv_init, their `_c` forms.
// Everything that can be built once is built at init: the object, its wire buffer and shape, and
// the MPI's own persistent request on that wire, which the application holds (so matching,
// MPI_Start's order, cancel and every completion call stay the MPI's). A start packs a send's
// object into its wire before the MPI starts it (MPI_Startall: the sends by one kernel,
// transfer::pack_wave); a receive's completion unpacks its wire (several at once as an arrival
// wave, as for MPI_Irecv). Starts, completions and frees: calls/persistent_requests.hpp.
#pragma once

#include <mpi.h>

#include "calls/persistent.hpp"
#include "calls/persistent_requests.hpp"
#include "offers/protocol.hpp"
#include "transfer/state.hpp"
#include "transfer/wire.hpp"

namespace strider::calls {

// The wire of a send (or receive) Strider moves, prepared for the MPI's init.
int prepare_persistent_send(const transfer::Object& object, const transfer::Peer& peer,
                            PersistentTransfer& p);
int prepare_persistent_receive(const transfer::Object& object, const transfer::Peer& peer,
                               PersistentTransfer& p);
// MPI_Send_init, Bsend_init, Ssend_init, Rsend_init (and `_c`): `next` is the MPI's init.
template <class Next, class Count>
int persistent_send_init(Next next, const char* name, const char* instead, const void* buf,
                         Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  transfer::Object object;
  const bool served = dest != MPI_PROC_NULL &&
                      transfer::p2p_object(buf, count, type, false, {comm, dest}, object, true);
  // The MPI reads no buffer for an empty message or MPI_PROC_NULL: those go to it as they are.
  if (!served && dest != MPI_PROC_NULL && count != 0 && refuse_persistent({buf})) {
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
                      transfer::p2p_object(buf, count, type, true, {comm, source}, object, true);
  if (!served && source != MPI_PROC_NULL && count != 0 && refuse_persistent({buf})) {
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

}  // namespace strider::calls
