// The persistent point-to-point calls (MPI_Send_init, ..., MPI_Recv_init, MPI-4's large-count
// forms where the MPI has them) and MPI_Start / MPI_Startall. On buffers Strider moves they are
// served (calls/persistent_p2p.hpp); on other GPU buffers and an MPI that is not CUDA-aware they
// are refused with MPI_ERR_BUFFER (calls/persistent.hpp); everything else goes to the MPI.
#include <mpi.h>

#include "calls/deferred_sends.hpp"
#include "calls/persistent_p2p.hpp"
#include "interpose/export.hpp"
#include "runtime/profile.hpp"
#include "transfer/next.hpp"
#include "transfer/requests.hpp"

using strider::transfer::ProgressOrphans;

STRIDER_EXPORT int MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                 int tag, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_send_init(STRIDER_NEXT(MPI_Send_init), "MPI_Send_init",
                                              "MPI_Isend", buf, count, datatype, dest, tag, comm,
                                              request);
}

STRIDER_EXPORT int MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_send_init(STRIDER_NEXT(MPI_Bsend_init), "MPI_Bsend_init",
                                              "MPI_Ibsend", buf, count, datatype, dest, tag, comm,
                                              request);
}

STRIDER_EXPORT int MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_send_init(STRIDER_NEXT(MPI_Ssend_init), "MPI_Ssend_init",
                                              "MPI_Issend", buf, count, datatype, dest, tag, comm,
                                              request);
}

STRIDER_EXPORT int MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_send_init(STRIDER_NEXT(MPI_Rsend_init), "MPI_Rsend_init",
                                              "MPI_Irsend", buf, count, datatype, dest, tag, comm,
                                              request);
}

STRIDER_EXPORT int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                                 MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_recv_init(STRIDER_NEXT(MPI_Recv_init), "MPI_Recv_init",
                                              "MPI_Irecv", buf, count, datatype, source, tag, comm,
                                              request);
}

STRIDER_EXPORT int MPI_Start(MPI_Request* request) {
  const strider::calls::EntryCall entry;
  const strider::runtime::Timed timed(strider::runtime::Phase::Startall);
  ProgressOrphans progress;
  return strider::calls::start_persistent(1, request,
                                          [&] { return STRIDER_NEXT(MPI_Start)(request); });
}

STRIDER_EXPORT int MPI_Startall(int count, MPI_Request requests_[]) {
  const strider::calls::EntryCall entry;
  const strider::runtime::Timed timed(strider::runtime::Phase::Startall);
  ProgressOrphans progress;
  return strider::calls::start_persistent(
      count, requests_, [&] { return STRIDER_NEXT(MPI_Startall)(count, requests_); });
}

#if STRIDER_HAVE_MPI4_P2P

STRIDER_EXPORT int MPI_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                   int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_send_init(STRIDER_NEXT(MPI_Send_init_c), "MPI_Send_init_c",
                                              "MPI_Isend_c", buf, count, datatype, dest, tag, comm,
                                              request);
}

STRIDER_EXPORT int MPI_Bsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                    int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_send_init(STRIDER_NEXT(MPI_Bsend_init_c), "MPI_Bsend_init_c",
                                              "MPI_Ibsend_c", buf, count, datatype, dest, tag, comm,
                                              request);
}

STRIDER_EXPORT int MPI_Ssend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                    int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_send_init(STRIDER_NEXT(MPI_Ssend_init_c), "MPI_Ssend_init_c",
                                              "MPI_Issend_c", buf, count, datatype, dest, tag, comm,
                                              request);
}

STRIDER_EXPORT int MPI_Rsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                    int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_send_init(STRIDER_NEXT(MPI_Rsend_init_c), "MPI_Rsend_init_c",
                                              "MPI_Irsend_c", buf, count, datatype, dest, tag, comm,
                                              request);
}

STRIDER_EXPORT int MPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                                   int tag, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_recv_init(STRIDER_NEXT(MPI_Recv_init_c), "MPI_Recv_init_c",
                                              "MPI_Irecv_c", buf, count, datatype, source, tag,
                                              comm, request);
}

#endif  // STRIDER_HAVE_MPI4_P2P
