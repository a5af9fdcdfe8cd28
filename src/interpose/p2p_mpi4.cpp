// The MPI-4 large-count point-to-point calls (`_c`, MPI_Count counts), for MPIs that have them
// (MPICH 4; mpi4py calls them wherever they exist). Same paths as the MPI-3 calls; a count past
// INT_MAX goes to the MPI unchanged for host buffers and is refused for GPU buffers.
// MPI_Isendrecv(_replace) are not served: MPICH 4.0's statuses for them report no received
// bytes, so the amount to unpack would be unknown.
#include <mpi.h>

#include "calls/deferred_sends.hpp"
#include "calls/p2p_calls.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"

using namespace strider::transfer;

STRIDER_EXPORT int MPI_Send_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest,
                              int tag, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  return strider::calls::blocking_send(STRIDER_NEXT(MPI_Send_c), buf, count, type, dest, tag, comm);
}

STRIDER_EXPORT int MPI_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest,
                               int tag, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  return strider::calls::blocking_send(STRIDER_NEXT(MPI_Ssend_c), buf, count, type, dest, tag,
                                       comm);
}

STRIDER_EXPORT int MPI_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest,
                               int tag, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  return strider::calls::blocking_send(STRIDER_NEXT(MPI_Rsend_c), buf, count, type, dest, tag,
                                       comm);
}

STRIDER_EXPORT int MPI_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest,
                               int tag, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  return strider::calls::blocking_send(STRIDER_NEXT(MPI_Bsend_c), buf, count, type, dest, tag,
                                       comm);
}

STRIDER_EXPORT int MPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest,
                               int tag, MPI_Comm comm, MPI_Request* request) {
  return strider::calls::nonblocking_send(STRIDER_NEXT(MPI_Isend_c), STRIDER_NEXT(MPI_Send_init),
                                          buf, count, type, dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Issend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest,
                                int tag, MPI_Comm comm, MPI_Request* request) {
  return strider::calls::nonblocking_send(STRIDER_NEXT(MPI_Issend_c), nullptr, buf, count, type,
                                          dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag,
                              MPI_Comm comm, MPI_Status* status) {
  const strider::calls::EntryCall entry;
  return strider::calls::recv(STRIDER_NEXT(MPI_Recv_c),
                              strider::calls::posted_receive(STRIDER_NEXT(MPI_Irecv_c)), buf, count,
                              type, source, tag, comm, status);
}

STRIDER_EXPORT int MPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag,
                               MPI_Comm comm, MPI_Request* request) {
  return strider::calls::irecv(STRIDER_NEXT(MPI_Irecv_c), buf, count, type, source, tag, comm,
                               request);
}

STRIDER_EXPORT int MPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message,
                               MPI_Status* status) {
  const strider::calls::EntryCall entry;
  return strider::calls::mrecv(STRIDER_NEXT(MPI_Mrecv_c), buf, count, type, message, status);
}

STRIDER_EXPORT int MPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message,
                                MPI_Request* request) {
  const strider::calls::EntryCall entry;
  return strider::calls::imrecv(STRIDER_NEXT(MPI_Imrecv_c), buf, count, type, message, request);
}

STRIDER_EXPORT int MPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  int dest, int sendtag, void* recvbuf, MPI_Count recvcount,
                                  MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                                  MPI_Status* status) {
  const strider::calls::EntryCall entry;
  return strider::calls::sendrecv(
      STRIDER_NEXT(MPI_Sendrecv_c), strider::calls::posted_receive(STRIDER_NEXT(MPI_Irecv_c)),
      STRIDER_NEXT(MPI_Send_c), sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
      recvtype, source, recvtag, comm, status);
}

STRIDER_EXPORT int MPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype type, int dest,
                                          int sendtag, int source, int recvtag, MPI_Comm comm,
                                          MPI_Status* status) {
  const strider::calls::EntryCall entry;
  return strider::calls::sendrecv_replace(STRIDER_NEXT(MPI_Sendrecv_replace_c),
                                          STRIDER_NEXT(MPI_Sendrecv_c), buf, count, type, dest,
                                          sendtag, source, recvtag, comm, status);
}

STRIDER_EXPORT int MPI_Ibsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest,
                                int tag, MPI_Comm comm, MPI_Request* request) {
  return strider::calls::nonblocking_send(STRIDER_NEXT(MPI_Ibsend_c), nullptr, buf, count, type,
                                          dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Irsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest,
                                int tag, MPI_Comm comm, MPI_Request* request) {
  return strider::calls::nonblocking_send(STRIDER_NEXT(MPI_Irsend_c), STRIDER_NEXT(MPI_Rsend_init),
                                          buf, count, type, dest, tag, comm, request);
}
