// MPI_Allgather(v), Gather(v), Scatter(v), Bcast and their nonblocking forms. GPU buffers (and host
// ones with STRIDER_COLL_HOST=pack) go through Strider's collective path (collective/);
// the rest goes to the MPI unchanged.
#include <mpi.h>

#include "calls/collectives.hpp"
#include "calls/deferred_sends.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"
#include "transfer/requests.hpp"

using namespace strider::transfer;

STRIDER_EXPORT int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                                 int rcount, MPI_Datatype rtype, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, nullptr);
}

STRIDER_EXPORT int MPI_Iallgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                                  int rcount, MPI_Datatype rtype, MPI_Comm comm,
                                  MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Iallgather, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  ProgressOrphans progress;
  return strider::calls::allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, request);
}

STRIDER_EXPORT int MPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                                  const int rcounts[], const int displs[], MPI_Datatype rtype,
                                  MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
                                    nullptr);
}

STRIDER_EXPORT int MPI_Iallgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                                   const int rcounts[], const int displs[], MPI_Datatype rtype,
                                   MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Iallgatherv, sbuf, scount, stype, rbuf, rcounts, displs,
                                   rtype, comm);
  ProgressOrphans progress;
  return strider::calls::allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
                                    request);
}

STRIDER_EXPORT int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                              int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, nullptr);
}

STRIDER_EXPORT int MPI_Igather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                               int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                               MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Igather, sbuf, scount, stype, rbuf, rcount, rtype, root,
                                   comm);
  ProgressOrphans progress;
  return strider::calls::gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, request);
}

STRIDER_EXPORT int MPI_Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                               const int rcounts[], const int displs[], MPI_Datatype rtype,
                               int root, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,
                                 nullptr);
}

STRIDER_EXPORT int MPI_Igatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                                const int rcounts[], const int displs[], MPI_Datatype rtype,
                                int root, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Igatherv, sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                                   root, comm);
  ProgressOrphans progress;
  return strider::calls::gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,
                                 request);
}

STRIDER_EXPORT int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                               int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, nullptr);
}

STRIDER_EXPORT int MPI_Iscatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                                int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                                MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Iscatter, sbuf, scount, stype, rbuf, rcount, rtype, root,
                                   comm);
  ProgressOrphans progress;
  return strider::calls::scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, request);
}

STRIDER_EXPORT int MPI_Scatterv(const void* sbuf, const int scounts[], const int displs[],
                                MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                                int root, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm,
                                  nullptr);
}

STRIDER_EXPORT int MPI_Iscatterv(const void* sbuf, const int scounts[], const int displs[],
                                 MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                                 int root, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Iscatterv, sbuf, scounts, displs, stype, rbuf, rcount, rtype,
                                   root, comm);
  ProgressOrphans progress;
  return strider::calls::scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm,
                                  request);
}

STRIDER_EXPORT int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::bcast(buf, count, type, root, comm, nullptr);
}

STRIDER_EXPORT int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                              MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ibcast, buf, count, type, root, comm);
  ProgressOrphans progress;
  return strider::calls::bcast(buf, count, type, root, comm, request);
}
