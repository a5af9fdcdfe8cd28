// Receives: MPI_Recv, Irecv, Mrecv, Imrecv. A buffer Strider moves is received as MPI_PACKED
// into a wire buffer and unpacked when the receive is seen complete: at once for the blocking
// calls, by whichever completion function observes it for the nonblocking ones. A blocking
// receive that makes a same-node offer is posted as MPI_Irecv + MPI_Wait (posted_receive.hpp).
#include <mpi.h>

#include "calls/deferred_sends.hpp"
#include "calls/p2p_calls.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"

using namespace strider::transfer;

STRIDER_EXPORT int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag,
                            MPI_Comm comm, MPI_Status* status) {
  const strider::calls::EntryCall entry;
  return strider::calls::recv(STRIDER_NEXT(MPI_Recv),
                              strider::calls::posted_receive(STRIDER_NEXT(MPI_Irecv)), buf, count,
                              type, source, tag, comm, status);
}

STRIDER_EXPORT int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                             MPI_Comm comm, MPI_Request* request) {
  return strider::calls::irecv(STRIDER_NEXT(MPI_Irecv), buf, count, type, source, tag, comm,
                               request);
}

STRIDER_EXPORT int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
                             MPI_Status* status) {
  const strider::calls::EntryCall entry;
  return strider::calls::mrecv(STRIDER_NEXT(MPI_Mrecv), buf, count, type, message, status);
}

STRIDER_EXPORT int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
                              MPI_Request* request) {
  const strider::calls::EntryCall entry;
  return strider::calls::imrecv(STRIDER_NEXT(MPI_Imrecv), buf, count, type, message, request);
}
