// The collectives Strider serves, one function per MPI collective: the blocking call when
// `request` is null, the nonblocking one (MPI_I...) otherwise. Each decides whether Strider
// moves any of this rank's buffers (GPU memory, or host memory with STRIDER_COLL_HOST=pack)
// and otherwise forwards the call to the MPI unchanged, which also reports bad arguments.
#pragma once

#include <mpi.h>

namespace strider::calls {

int alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
             MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request);
int alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
              void* rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
              MPI_Comm comm, MPI_Request* request);
int alltoallw(const void* sbuf, const int scounts[], const int sdispls[],
              const MPI_Datatype stypes[], void* rbuf, const int rcounts[], const int rdispls[],
              const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request* request);

int allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
              MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request);
int allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
               const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request);
int gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
           MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request);
int gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
            const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request);
int scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
            MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request);
int scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
             void* rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
             MPI_Request* request);
int bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request);

int reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, MPI_Request* request);
int allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              MPI_Request* request);
int reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request);
int reduce_scatter_block(const void* sbuf, void* rbuf, int rcount, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm, MPI_Request* request);
int scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         MPI_Request* request);
int exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
           MPI_Request* request);

int neighbor_allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                       MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request);
int neighbor_allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                        const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                        MPI_Request* request);
int neighbor_alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                      MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request);
int neighbor_alltoallv(const void* sbuf, const int scounts[], const int sdispls[],
                       MPI_Datatype stype, void* rbuf, const int rcounts[], const int rdispls[],
                       MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request);
int neighbor_alltoallw(const void* sbuf, const int scounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype stypes[], void* rbuf, const int rcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                       MPI_Request* request);

}  // namespace strider::calls
