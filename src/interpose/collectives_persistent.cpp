// MPI-4's persistent collectives (MPI_<collective>_init), for MPIs that have them (MPICH 4;
// Open MPI 4.1 is MPI-3.1). Served like their nonblocking forms, with the wires built once
// (calls/persistent_requests.hpp); one Strider does not serve goes to the MPI (or, where the
// MPI's own is unreliable and its buffers are GPU memory, is refused with MPI_ERR_BUFFER).
#include <mpi.h>

#include "calls/collectives.hpp"
#include "calls/deferred_sends.hpp"
#include "calls/persistent_requests.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"
#include "transfer/requests.hpp"

using strider::collective::Form;
using strider::transfer::ProgressOrphans;

STRIDER_EXPORT int MPI_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                      MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Allgather_init", "MPI_Iallgather", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                         comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Allgather_init)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                                recvtype, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, const int recvcounts[], const int displs[],
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                       MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Allgatherv_init", "MPI_Iallgatherv", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                          recvtype, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Allgatherv_init)(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                                 displs, recvtype, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                      MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Allreduce_init", "MPI_Iallreduce", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::allreduce(sendbuf, recvbuf, count, datatype, op, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Allreduce_init)(sendbuf, recvbuf, count, datatype, op, comm, info,
                                                request);
      });
}

STRIDER_EXPORT int MPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Alltoall_init", "MPI_Ialltoall", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                        comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Alltoall_init)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                               recvtype, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Alltoallv_init(const void* sendbuf, const int sendcounts[],
                                      const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                      const int recvcounts[], const int rdispls[],
                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                      MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Alltoallv_init", "MPI_Ialltoallv", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                         recvcounts, rdispls, recvtype, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Alltoallv_init)(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                recvcounts, rdispls, recvtype, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Alltoallw_init(const void* sendbuf, const int sendcounts[],
                                      const int sdispls[], const MPI_Datatype sendtypes[],
                                      void* recvbuf, const int recvcounts[], const int rdispls[],
                                      const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                      MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Alltoallw_init", "MPI_Ialltoallw", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                         recvcounts, rdispls, recvtypes, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Alltoallw_init)(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                                recvcounts, rdispls, recvtypes, comm, info,
                                                request);
      });
}

STRIDER_EXPORT int MPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root,
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Bcast_init", "MPI_Ibcast", {buffer}, info, request,
      [&](const Form& form) {
        return strider::calls::bcast(buffer, count, datatype, root, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Bcast_init)(buffer, count, datatype, root, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Exscan_init(const void* sendbuf, void* recvbuf, int count,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Exscan_init", "MPI_Iexscan", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::exscan(sendbuf, recvbuf, count, datatype, op, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Exscan_init)(sendbuf, recvbuf, count, datatype, op, comm, info,
                                             request);
      });
}

STRIDER_EXPORT int MPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                   MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Gather_init", "MPI_Igather", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      root, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Gather_init)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, root, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                    MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Gatherv_init", "MPI_Igatherv", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                       recvtype, root, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Gatherv_init)(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                              displs, recvtype, root, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Reduce_init(const void* sendbuf, void* recvbuf, int count,
                                   MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                   MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Reduce_init", "MPI_Ireduce", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::reduce(sendbuf, recvbuf, count, datatype, op, root, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Reduce_init)(sendbuf, recvbuf, count, datatype, op, root, comm,
                                             info, request);
      });
}

STRIDER_EXPORT int MPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf,
                                           const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                           MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Reduce_scatter_init", "MPI_Ireduce_scatter", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm,
                                              form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Reduce_scatter_init)(sendbuf, recvbuf, recvcounts, datatype, op,
                                                     comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                 MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Reduce_scatter_block_init", "MPI_Ireduce_scatter_block", {sendbuf, recvbuf}, info,
      request,
      [&](const Form& form) {
        return strider::calls::reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                                    form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Reduce_scatter_block_init)(sendbuf, recvbuf, recvcount, datatype,
                                                           op, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Scan_init(const void* sendbuf, void* recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Scan_init", "MPI_Iscan", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::scan(sendbuf, recvbuf, count, datatype, op, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Scan_init)(sendbuf, recvbuf, count, datatype, op, comm, info,
                                           request);
      });
}

STRIDER_EXPORT int MPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                    MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Scatter_init", "MPI_Iscatter", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                       root, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Scatter_init)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                              recvtype, root, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Scatterv_init(const void* sendbuf, const int sendcounts[],
                                     const int displs[], MPI_Datatype sendtype, void* recvbuf,
                                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                     MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Scatterv_init", "MPI_Iscatterv", {sendbuf, recvbuf}, info, request,
      [&](const Form& form) {
        return strider::calls::scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                        recvtype, root, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Scatterv_init)(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                               recvcount, recvtype, root, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Neighbor_allgather_init(const void* sendbuf, int sendcount,
                                               MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                               MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Neighbor_allgather_init", "MPI_Ineighbor_allgather", {sendbuf, recvbuf}, info,
      request,
      [&](const Form& form) {
        return strider::calls::neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                                  recvtype, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Neighbor_allgather_init)(sendbuf, sendcount, sendtype, recvbuf,
                                                         recvcount, recvtype, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount,
                                                MPI_Datatype sendtype, void* recvbuf,
                                                const int recvcounts[], const int displs[],
                                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                                MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Neighbor_allgatherv_init", "MPI_Ineighbor_allgatherv", {sendbuf, recvbuf}, info,
      request,
      [&](const Form& form) {
        return strider::calls::neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                   recvcounts, displs, recvtype, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Neighbor_allgatherv_init)(sendbuf, sendcount, sendtype, recvbuf,
                                                          recvcounts, displs, recvtype, comm, info,
                                                          request);
      });
}

STRIDER_EXPORT int MPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount,
                                              MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                              MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Neighbor_alltoall_init", "MPI_Ineighbor_alltoall", {sendbuf, recvbuf}, info,
      request,
      [&](const Form& form) {
        return strider::calls::neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                                 recvtype, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Neighbor_alltoall_init)(sendbuf, sendcount, sendtype, recvbuf,
                                                        recvcount, recvtype, comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[],
                                               const int sdispls[], MPI_Datatype sendtype,
                                               void* recvbuf, const int recvcounts[],
                                               const int rdispls[], MPI_Datatype recvtype,
                                               MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Neighbor_alltoallv_init", "MPI_Ineighbor_alltoallv", {sendbuf, recvbuf}, info,
      request,
      [&](const Form& form) {
        return strider::calls::neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                  recvcounts, rdispls, recvtype, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Neighbor_alltoallv_init)(sendbuf, sendcounts, sdispls, sendtype,
                                                         recvbuf, recvcounts, rdispls, recvtype,
                                                         comm, info, request);
      });
}

STRIDER_EXPORT int MPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                               const MPI_Aint sdispls[],
                                               const MPI_Datatype sendtypes[], void* recvbuf,
                                               const int recvcounts[], const MPI_Aint rdispls[],
                                               const MPI_Datatype recvtypes[], MPI_Comm comm,
                                               MPI_Info info, MPI_Request* request) {
  const strider::calls::EntryCall entry;
  ProgressOrphans progress;
  return strider::calls::persistent_collective(
      comm, "MPI_Neighbor_alltoallw_init", "MPI_Ineighbor_alltoallw", {sendbuf, recvbuf}, info,
      request,
      [&](const Form& form) {
        return strider::calls::neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                                  recvcounts, rdispls, recvtypes, comm, form);
      },
      [&] {
        return STRIDER_NEXT(MPI_Neighbor_alltoallw_init)(sendbuf, sendcounts, sdispls, sendtypes,
                                                         recvbuf, recvcounts, rdispls, recvtypes,
                                                         comm, info, request);
      });
}
