// MPI_Sendrecv and MPI_Sendrecv_replace (see p2p_calls.hpp).
#include <mpi.h>

#include "calls/deferred_sends.hpp"
#include "calls/p2p_calls.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"

using namespace strider::transfer;

STRIDER_EXPORT int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                                int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  const strider::calls::EntryCall entry;
  return strider::calls::sendrecv(
      STRIDER_NEXT(MPI_Sendrecv), strider::calls::posted_receive(STRIDER_NEXT(MPI_Irecv)),
      STRIDER_NEXT(MPI_Send), sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
      recvtype, source, recvtag, comm, status);
}

STRIDER_EXPORT int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest,
                                        int sendtag, int source, int recvtag, MPI_Comm comm,
                                        MPI_Status* status) {
  const strider::calls::EntryCall entry;
  return strider::calls::sendrecv_replace(STRIDER_NEXT(MPI_Sendrecv_replace),
                                          STRIDER_NEXT(MPI_Sendrecv), buf, count, type, dest,
                                          sendtag, source, recvtag, comm, status);
}
