// Sends: MPI_Send, Ssend, Rsend, Bsend (blocking) and Isend, Issend, Ibsend, Irsend
// (nonblocking). A buffer
// Strider moves is packed before the call into a wire buffer sent as MPI_PACKED; anything else
// goes to the MPI unchanged.
#include <mpi.h>

#include "calls/deferred_sends.hpp"
#include "calls/p2p_calls.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"

using namespace strider::transfer;

STRIDER_EXPORT int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  return strider::calls::blocking_send(STRIDER_NEXT(MPI_Send), buf, count, type, dest, tag, comm);
}

STRIDER_EXPORT int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                             MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  return strider::calls::blocking_send(STRIDER_NEXT(MPI_Ssend), buf, count, type, dest, tag, comm);
}

STRIDER_EXPORT int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                             MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  return strider::calls::blocking_send(STRIDER_NEXT(MPI_Rsend), buf, count, type, dest, tag, comm);
}

STRIDER_EXPORT int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                             MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  return strider::calls::blocking_send(STRIDER_NEXT(MPI_Bsend), buf, count, type, dest, tag, comm);
}

STRIDER_EXPORT int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                             MPI_Comm comm, MPI_Request* request) {
  return strider::calls::nonblocking_send(STRIDER_NEXT(MPI_Isend), STRIDER_NEXT(MPI_Send_init), buf,
                                          count, type, dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                              MPI_Comm comm, MPI_Request* request) {
  return strider::calls::nonblocking_send(STRIDER_NEXT(MPI_Issend), nullptr, buf, count, type, dest,
                                          tag, comm, request);
}

STRIDER_EXPORT int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                              MPI_Comm comm, MPI_Request* request) {
  return strider::calls::nonblocking_send(STRIDER_NEXT(MPI_Ibsend), nullptr, buf, count, type, dest,
                                          tag, comm, request);
}

STRIDER_EXPORT int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                              MPI_Comm comm, MPI_Request* request) {
  return strider::calls::nonblocking_send(STRIDER_NEXT(MPI_Irsend), STRIDER_NEXT(MPI_Rsend_init),
                                          buf, count, type, dest, tag, comm, request);
}
