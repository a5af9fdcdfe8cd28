// The persistent point-to-point calls (MPI_Send_init, ..., MPI_Recv_init, and MPI-4's
// large-count forms where the MPI has them). Not served (calls/persistent.hpp): on GPU memory
// and an MPI that is not CUDA-aware they are refused with MPI_ERR_BUFFER; otherwise they go to
// the MPI.
#include <mpi.h>

#include "calls/persistent.hpp"
#include "interpose/export.hpp"
#include "offers/protocol.hpp"
#include "transfer/next.hpp"

using namespace strider::transfer;

STRIDER_EXPORT int MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                 int tag, MPI_Comm comm, MPI_Request* request) {
  if (strider::calls::refuse_persistent({buf}, false)) {
    return strider::calls::persistent_refused(comm, "MPI_Send_init", "MPI_Isend");
  }
  strider::offers::persistent_send(comm, dest, tag);  // its starts are not numbered
  return STRIDER_NEXT(MPI_Send_init)(buf, count, datatype, dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm, MPI_Request* request) {
  if (strider::calls::refuse_persistent({buf}, false)) {
    return strider::calls::persistent_refused(comm, "MPI_Bsend_init", "MPI_Ibsend");
  }
  strider::offers::persistent_send(comm, dest, tag);  // its starts are not numbered
  return STRIDER_NEXT(MPI_Bsend_init)(buf, count, datatype, dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm, MPI_Request* request) {
  if (strider::calls::refuse_persistent({buf}, false)) {
    return strider::calls::persistent_refused(comm, "MPI_Ssend_init", "MPI_Issend");
  }
  strider::offers::persistent_send(comm, dest, tag);  // its starts are not numbered
  return STRIDER_NEXT(MPI_Ssend_init)(buf, count, datatype, dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm, MPI_Request* request) {
  if (strider::calls::refuse_persistent({buf}, false)) {
    return strider::calls::persistent_refused(comm, "MPI_Rsend_init", "MPI_Irsend");
  }
  strider::offers::persistent_send(comm, dest, tag);  // its starts are not numbered
  return STRIDER_NEXT(MPI_Rsend_init)(buf, count, datatype, dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                                 MPI_Comm comm, MPI_Request* request) {
  if (strider::calls::refuse_persistent({buf}, false)) {
    return strider::calls::persistent_refused(comm, "MPI_Recv_init", "MPI_Irecv");
  }
  strider::offers::persistent_receive(comm);  // its starts are not counted
  return STRIDER_NEXT(MPI_Recv_init)(buf, count, datatype, source, tag, comm, request);
}

#if STRIDER_HAVE_MPI4_P2P

STRIDER_EXPORT int MPI_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                   int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (strider::calls::refuse_persistent({buf}, false)) {
    return strider::calls::persistent_refused(comm, "MPI_Send_init_c", "MPI_Isend_c");
  }
  strider::offers::persistent_send(comm, dest, tag);  // its starts are not numbered
  return STRIDER_NEXT(MPI_Send_init_c)(buf, count, datatype, dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Bsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                    int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (strider::calls::refuse_persistent({buf}, false)) {
    return strider::calls::persistent_refused(comm, "MPI_Bsend_init_c", "MPI_Ibsend_c");
  }
  strider::offers::persistent_send(comm, dest, tag);  // its starts are not numbered
  return STRIDER_NEXT(MPI_Bsend_init_c)(buf, count, datatype, dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Ssend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                    int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (strider::calls::refuse_persistent({buf}, false)) {
    return strider::calls::persistent_refused(comm, "MPI_Ssend_init_c", "MPI_Issend_c");
  }
  strider::offers::persistent_send(comm, dest, tag);  // its starts are not numbered
  return STRIDER_NEXT(MPI_Ssend_init_c)(buf, count, datatype, dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Rsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                    int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (strider::calls::refuse_persistent({buf}, false)) {
    return strider::calls::persistent_refused(comm, "MPI_Rsend_init_c", "MPI_Irsend_c");
  }
  strider::offers::persistent_send(comm, dest, tag);  // its starts are not numbered
  return STRIDER_NEXT(MPI_Rsend_init_c)(buf, count, datatype, dest, tag, comm, request);
}

STRIDER_EXPORT int MPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                                   int tag, MPI_Comm comm, MPI_Request* request) {
  if (strider::calls::refuse_persistent({buf}, false)) {
    return strider::calls::persistent_refused(comm, "MPI_Recv_init_c", "MPI_Irecv_c");
  }
  strider::offers::persistent_receive(comm);  // its starts are not counted
  return STRIDER_NEXT(MPI_Recv_init_c)(buf, count, datatype, source, tag, comm, request);
}

#endif  // STRIDER_HAVE_MPI4_P2P
