// MPI_Neighbor_allgather(v) and Neighbor_alltoall(v,w) and their nonblocking forms. GPU buffers
// (and host ones with STRIDER_COLL_HOST=pack) go through Strider's collective path
// (collective/); the rest goes to the MPI unchanged.
#include <mpi.h>

#include "calls/collectives.hpp"
#include "calls/deferred_sends.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"
#include "transfer/requests.hpp"

using namespace strider::transfer;

STRIDER_EXPORT int MPI_Neighbor_allgather(const void* sbuf, int scount, MPI_Datatype stype,
                                          void* rbuf, int rcount, MPI_Datatype rtype,
                                          MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::neighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm,
                                            nullptr);
}

STRIDER_EXPORT int MPI_Ineighbor_allgather(const void* sbuf, int scount, MPI_Datatype stype,
                                           void* rbuf, int rcount, MPI_Datatype rtype,
                                           MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ineighbor_allgather, sbuf, scount, stype, rbuf, rcount,
                                   rtype, comm);
  ProgressOrphans progress;
  return strider::calls::neighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm,
                                            request);
}

STRIDER_EXPORT int MPI_Neighbor_allgatherv(const void* sbuf, int scount, MPI_Datatype stype,
                                           void* rbuf, const int rcounts[], const int displs[],
                                           MPI_Datatype rtype, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::neighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                                             comm, nullptr);
}

STRIDER_EXPORT int MPI_Ineighbor_allgatherv(const void* sbuf, int scount, MPI_Datatype stype,
                                            void* rbuf, const int rcounts[], const int displs[],
                                            MPI_Datatype rtype, MPI_Comm comm,
                                            MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ineighbor_allgatherv, sbuf, scount, stype, rbuf, rcounts,
                                   displs, rtype, comm);
  ProgressOrphans progress;
  return strider::calls::neighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                                             comm, request);
}

STRIDER_EXPORT int MPI_Neighbor_alltoall(const void* sbuf, int scount, MPI_Datatype stype,
                                         void* rbuf, int rcount, MPI_Datatype rtype,
                                         MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::neighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, nullptr);
}

STRIDER_EXPORT int MPI_Ineighbor_alltoall(const void* sbuf, int scount, MPI_Datatype stype,
                                          void* rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm,
                                          MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ineighbor_alltoall, sbuf, scount, stype, rbuf, rcount, rtype,
                                   comm);
  ProgressOrphans progress;
  return strider::calls::neighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, request);
}

STRIDER_EXPORT int MPI_Neighbor_alltoallv(const void* sbuf, const int scounts[],
                                          const int sdispls[], MPI_Datatype stype, void* rbuf,
                                          const int rcounts[], const int rdispls[],
                                          MPI_Datatype rtype, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::neighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls,
                                            rtype, comm, nullptr);
}

STRIDER_EXPORT int MPI_Ineighbor_alltoallv(const void* sbuf, const int scounts[],
                                           const int sdispls[], MPI_Datatype stype, void* rbuf,
                                           const int rcounts[], const int rdispls[],
                                           MPI_Datatype rtype, MPI_Comm comm,
                                           MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ineighbor_alltoallv, sbuf, scounts, sdispls, stype, rbuf,
                                   rcounts, rdispls, rtype, comm);
  ProgressOrphans progress;
  return strider::calls::neighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls,
                                            rtype, comm, request);
}

STRIDER_EXPORT int MPI_Neighbor_alltoallw(const void* sbuf, const int scounts[],
                                          const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                                          void* rbuf, const int rcounts[], const MPI_Aint rdispls[],
                                          const MPI_Datatype rtypes[], MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                                            rtypes, comm, nullptr);
}

STRIDER_EXPORT int MPI_Ineighbor_alltoallw(const void* sbuf, const int scounts[],
                                           const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                                           void* rbuf, const int rcounts[],
                                           const MPI_Aint rdispls[], const MPI_Datatype rtypes[],
                                           MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ineighbor_alltoallw, sbuf, scounts, sdispls, stypes, rbuf,
                                   rcounts, rdispls, rtypes, comm);
  ProgressOrphans progress;
  return strider::calls::neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                                            rtypes, comm, request);
}
