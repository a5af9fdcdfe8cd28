// MPI-4's large-count collectives (`_c`), for MPIs that have them (MPICH 4; mpi4py calls them
// wherever they exist, so its collectives on GPU buffers reach Strider only through these).
// Served through the classic paths where every count and displacement fits an int
// (calls/large_count.hpp); otherwise, and for the nonblocking forms with count arrays (whose
// arrays the MPI may read until completion) and the rooted and reduce-scatter ones with count
// arrays, the MPI's own `_c` call.
#include <mpi.h>

#include <vector>

#include "calls/collectives.hpp"
#include "calls/deferred_sends.hpp"
#include "calls/large_count.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"
#include "transfer/requests.hpp"

using strider::transfer::ProgressOrphans;

// The blocking and nonblocking `_c` forms of a collective whose counts are scalars: PARAMS the
// blocking form's parameter list, COUNTS its counts (braced), ARGS its argument list, NARROWED
// the same with the counts as ints (`narrow`).
#define STRIDER_WITH_REQUEST(...) (__VA_ARGS__, MPI_Request * request)
#define STRIDER_AND_REQUEST(...) (__VA_ARGS__, request)
#define STRIDER_ARGS(...) __VA_ARGS__
#define STRIDER_LARGE_COUNT_PAIR(Name, IName, call, PARAMS, COUNTS, ARGS, NARROWED) \
  STRIDER_EXPORT int MPI_##Name##_c PARAMS {                                        \
    const strider::calls::EntryCall entry;                                          \
    ProgressOrphans progress;                                                       \
    if (!strider::calls::fits_int COUNTS) return STRIDER_NEXT(MPI_##Name##_c) ARGS; \
    return strider::calls::call(STRIDER_ARGS NARROWED, nullptr);                    \
  }                                                                                 \
  STRIDER_EXPORT int MPI_##IName##_c STRIDER_WITH_REQUEST PARAMS {                  \
    const strider::calls::EntryCall entry;                                          \
    ProgressOrphans progress;                                                       \
    if (!strider::calls::fits_int COUNTS) {                                         \
      return STRIDER_NEXT(MPI_##IName##_c) STRIDER_AND_REQUEST ARGS;                \
    }                                                                               \
    return strider::calls::call(STRIDER_ARGS NARROWED, request);                    \
  }

// The reductions with one count and no root (Allreduce, Reduce_scatter_block, Scan, Exscan).
#define STRIDER_LARGE_COUNT_REDUCTION(Name, IName, call)                                      \
  STRIDER_LARGE_COUNT_PAIR(Name, IName, call,                                                 \
                           (const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, \
                            MPI_Op op, MPI_Comm comm),                                        \
                           ({count}), (sbuf, rbuf, count, type, op, comm),                    \
                           (sbuf, rbuf, narrow(count), type, op, comm))

namespace {

int narrow(MPI_Count count) { return static_cast<int>(count); }

}  // namespace

// clang-format off
STRIDER_LARGE_COUNT_PAIR(Allgather, Iallgather, allgather,
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, comm))
STRIDER_LARGE_COUNT_PAIR(Alltoall, Ialltoall, alltoall,
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, comm))
STRIDER_LARGE_COUNT_PAIR(Gather, Igather, gather,
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, root, comm))
STRIDER_LARGE_COUNT_PAIR(Scatter, Iscatter, scatter,
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, root, comm))
STRIDER_LARGE_COUNT_PAIR(Bcast, Ibcast, bcast,
    (void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm),
    ({count}),
    (buf, count, type, root, comm),
    (buf, narrow(count), type, root, comm))
STRIDER_LARGE_COUNT_PAIR(Reduce, Ireduce, reduce,
    (const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm),
    ({count}),
    (sbuf, rbuf, count, type, op, root, comm),
    (sbuf, rbuf, narrow(count), type, op, root, comm))
STRIDER_LARGE_COUNT_REDUCTION(Allreduce, Iallreduce, allreduce)
STRIDER_LARGE_COUNT_REDUCTION(Reduce_scatter_block, Ireduce_scatter_block, reduce_scatter_block)
STRIDER_LARGE_COUNT_REDUCTION(Scan, Iscan, scan)
STRIDER_LARGE_COUNT_REDUCTION(Exscan, Iexscan, exscan)
STRIDER_LARGE_COUNT_PAIR(Neighbor_allgather, Ineighbor_allgather, neighbor_allgather,
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, comm))
STRIDER_LARGE_COUNT_PAIR(Neighbor_alltoall, Ineighbor_alltoall, neighbor_alltoall,
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, comm))
// clang-format on

STRIDER_EXPORT int MPI_Allgatherv_c(const void* sbuf, MPI_Count scount, MPI_Datatype stype,
                                    void* rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                                    MPI_Datatype rtype, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  const int n = strider::calls::array_peers(comm);
  std::vector<int> rc, rd;
  if (!strider::calls::fits_int({scount}) || !strider::calls::narrow_all(rcounts, n, rc) ||
      !strider::calls::narrow_all(displs, n, rd)) {
    return STRIDER_NEXT(MPI_Allgatherv_c)(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  }
  return strider::calls::allgatherv(sbuf, static_cast<int>(scount), stype, rbuf, rc.data(),
                                    rd.data(), rtype, comm, nullptr);
}

STRIDER_EXPORT int MPI_Alltoallv_c(const void* sbuf, const MPI_Count scounts[],
                                   const MPI_Aint sdispls[], MPI_Datatype stype, void* rbuf,
                                   const MPI_Count rcounts[], const MPI_Aint rdispls[],
                                   MPI_Datatype rtype, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  const int n = strider::calls::array_peers(comm);
  strider::calls::NarrowedArrays a;
  if (!a.narrow(sbuf, scounts, sdispls, n, rcounts, rdispls, n)) {
    return STRIDER_NEXT(MPI_Alltoallv_c)(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls,
                                         rtype, comm);
  }
  return strider::calls::alltoallv(sbuf, a.send_counts.data(), a.send_displs.data(), stype, rbuf,
                                   a.recv_counts.data(), a.recv_displs.data(), rtype, comm,
                                   nullptr);
}

STRIDER_EXPORT int MPI_Alltoallw_c(const void* sbuf, const MPI_Count scounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                                   void* rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                                   const MPI_Datatype rtypes[], MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  const int n = strider::calls::array_peers(comm);
  strider::calls::NarrowedArrays a;
  if (!a.narrow(sbuf, scounts, sdispls, n, rcounts, rdispls, n)) {
    return STRIDER_NEXT(MPI_Alltoallw_c)(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                                         rtypes, comm);
  }
  return strider::calls::alltoallw(sbuf, a.send_counts.data(), a.send_displs.data(), stypes, rbuf,
                                   a.recv_counts.data(), a.recv_displs.data(), rtypes, comm,
                                   nullptr);
}

STRIDER_EXPORT int MPI_Neighbor_allgatherv_c(const void* sbuf, MPI_Count scount, MPI_Datatype stype,
                                             void* rbuf, const MPI_Count rcounts[],
                                             const MPI_Aint displs[], MPI_Datatype rtype,
                                             MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  int in = -1, out = -1;
  std::vector<int> rc, rd;
  if (!strider::calls::neighbor_degrees(comm, in, out) || !strider::calls::fits_int({scount}) ||
      !strider::calls::narrow_all(rcounts, in, rc) || !strider::calls::narrow_all(displs, in, rd)) {
    return STRIDER_NEXT(MPI_Neighbor_allgatherv_c)(sbuf, scount, stype, rbuf, rcounts, displs,
                                                   rtype, comm);
  }
  return strider::calls::neighbor_allgatherv(sbuf, static_cast<int>(scount), stype, rbuf, rc.data(),
                                             rd.data(), rtype, comm, nullptr);
}

STRIDER_EXPORT int MPI_Neighbor_alltoallv_c(const void* sbuf, const MPI_Count scounts[],
                                            const MPI_Aint sdispls[], MPI_Datatype stype,
                                            void* rbuf, const MPI_Count rcounts[],
                                            const MPI_Aint rdispls[], MPI_Datatype rtype,
                                            MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  int in = -1, out = -1;
  strider::calls::NarrowedArrays a;
  if (!strider::calls::neighbor_degrees(comm, in, out) ||
      !a.narrow(sbuf, scounts, sdispls, out, rcounts, rdispls, in)) {
    return STRIDER_NEXT(MPI_Neighbor_alltoallv_c)(sbuf, scounts, sdispls, stype, rbuf, rcounts,
                                                  rdispls, rtype, comm);
  }
  return strider::calls::neighbor_alltoallv(sbuf, a.send_counts.data(), a.send_displs.data(), stype,
                                            rbuf, a.recv_counts.data(), a.recv_displs.data(), rtype,
                                            comm, nullptr);
}

STRIDER_EXPORT int MPI_Neighbor_alltoallw_c(const void* sbuf, const MPI_Count scounts[],
                                            const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                                            void* rbuf, const MPI_Count rcounts[],
                                            const MPI_Aint rdispls[], const MPI_Datatype rtypes[],
                                            MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  int in = -1, out = -1;
  std::vector<int> sc, rc;
  if (!strider::calls::neighbor_degrees(comm, in, out) ||
      !strider::calls::narrow_all(scounts, out, sc) ||
      !strider::calls::narrow_all(rcounts, in, rc)) {
    return STRIDER_NEXT(MPI_Neighbor_alltoallw_c)(sbuf, scounts, sdispls, stypes, rbuf, rcounts,
                                                  rdispls, rtypes, comm);
  }
  return strider::calls::neighbor_alltoallw(sbuf, sc.data(), sdispls, stypes, rbuf, rc.data(),
                                            rdispls, rtypes, comm, nullptr);
}
