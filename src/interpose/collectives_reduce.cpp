// MPI_Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan and their nonblocking forms. GPU
// buffers (and host ones with STRIDER_COLL_HOST=pack) go through Strider's collective path
// (collective/); the rest goes to the MPI unchanged.
#include <mpi.h>

#include "calls/collectives.hpp"
#include "calls/deferred_sends.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"
#include "transfer/requests.hpp"

using namespace strider::transfer;

STRIDER_EXPORT int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op,
                              int root, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::reduce(sbuf, rbuf, count, type, op, root, comm, nullptr);
}

STRIDER_EXPORT int MPI_Ireduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type,
                               MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ireduce, sbuf, rbuf, count, type, op, root, comm);
  ProgressOrphans progress;
  return strider::calls::reduce(sbuf, rbuf, count, type, op, root, comm, request);
}

STRIDER_EXPORT int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type,
                                 MPI_Op op, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::allreduce(sbuf, rbuf, count, type, op, comm, nullptr);
}

STRIDER_EXPORT int MPI_Iallreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type,
                                  MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Iallreduce, sbuf, rbuf, count, type, op, comm);
  ProgressOrphans progress;
  return strider::calls::allreduce(sbuf, rbuf, count, type, op, comm, request);
}

STRIDER_EXPORT int MPI_Reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[],
                                      MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::reduce_scatter(sbuf, rbuf, rcounts, type, op, comm, nullptr);
}

STRIDER_EXPORT int MPI_Ireduce_scatter(const void* sbuf, void* rbuf, const int rcounts[],
                                       MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                       MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ireduce_scatter, sbuf, rbuf, rcounts, type, op, comm);
  ProgressOrphans progress;
  return strider::calls::reduce_scatter(sbuf, rbuf, rcounts, type, op, comm, request);
}

STRIDER_EXPORT int MPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int rcount,
                                            MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm, nullptr);
}

STRIDER_EXPORT int MPI_Ireduce_scatter_block(const void* sbuf, void* rbuf, int rcount,
                                             MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                             MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Ireduce_scatter_block, sbuf, rbuf, rcount, type, op, comm);
  ProgressOrphans progress;
  return strider::calls::reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm, request);
}

STRIDER_EXPORT int MPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::scan(sbuf, rbuf, count, type, op, comm, nullptr);
}

STRIDER_EXPORT int MPI_Iscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Iscan, sbuf, rbuf, count, type, op, comm);
  ProgressOrphans progress;
  return strider::calls::scan(sbuf, rbuf, count, type, op, comm, request);
}

STRIDER_EXPORT int MPI_Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::exscan(sbuf, rbuf, count, type, op, comm, nullptr);
}

STRIDER_EXPORT int MPI_Iexscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type,
                               MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  STRIDER_NULL_REQUEST_IS_THE_MPIS(MPI_Iexscan, sbuf, rbuf, count, type, op, comm);
  ProgressOrphans progress;
  return strider::calls::exscan(sbuf, rbuf, count, type, op, comm, request);
}
