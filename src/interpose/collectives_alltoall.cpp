// MPI_Alltoall, Alltoallv, Alltoallw and their nonblocking forms. GPU buffers (and host ones with
// STRIDER_COLL_HOST=pack) go through Strider's collective path (collective/); the rest
// goes to the MPI unchanged.
#include <mpi.h>

#include "calls/collectives.hpp"
#include "calls/deferred_sends.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"
#include "transfer/requests.hpp"

using namespace strider::transfer;

STRIDER_EXPORT int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                                int rcount, MPI_Datatype rtype, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, nullptr);
}

STRIDER_EXPORT int MPI_Ialltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                                 int rcount, MPI_Datatype rtype, MPI_Comm comm,
                                 MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ialltoall, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  ProgressOrphans progress;
  return strider::calls::alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, request);
}

STRIDER_EXPORT int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[],
                                 MPI_Datatype stype, void* rbuf, const int rcounts[],
                                 const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,
                                   comm, nullptr);
}

STRIDER_EXPORT int MPI_Ialltoallv(const void* sbuf, const int scounts[], const int sdispls[],
                                  MPI_Datatype stype, void* rbuf, const int rcounts[],
                                  const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                                  MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ialltoallv, sbuf, scounts, sdispls, stype, rbuf, rcounts,
                                   rdispls, rtype, comm);
  ProgressOrphans progress;
  return strider::calls::alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,
                                   comm, request);
}

STRIDER_EXPORT int MPI_Alltoallw(const void* sbuf, const int scounts[], const int sdispls[],
                                 const MPI_Datatype stypes[], void* rbuf, const int rcounts[],
                                 const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                                   comm, nullptr);
}

STRIDER_EXPORT int MPI_Ialltoallw(const void* sbuf, const int scounts[], const int sdispls[],
                                  const MPI_Datatype stypes[], void* rbuf, const int rcounts[],
                                  const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                                  MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ialltoallw, sbuf, scounts, sdispls, stypes, rbuf, rcounts,
                                   rdispls, rtypes, comm);
  ProgressOrphans progress;
  return strider::calls::alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                                   comm, request);
}
