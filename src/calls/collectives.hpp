// The collectives Strider serves, one function per MPI collective, each in the form `form`
// names (blocking, nonblocking MPI_I..., or persistent MPI_..._init; collective/form.hpp). Each
// decides whether Strider moves any of this rank's buffers (GPU memory, or host memory with
// STRIDER_COLL_HOST=pack) and otherwise forwards the call to the MPI unchanged, which also
// reports bad arguments.
#pragma once

#include <mpi.h>

#include "collective/form.hpp"

namespace strider::calls {

int alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
             MPI_Datatype rtype, MPI_Comm comm, const collective::Form& form);
int alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
              void* rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
              MPI_Comm comm, const collective::Form& form);
int alltoallw(const void* sbuf, const int scounts[], const int sdispls[],
              const MPI_Datatype stypes[], void* rbuf, const int rcounts[], const int rdispls[],
              const MPI_Datatype rtypes[], MPI_Comm comm, const collective::Form& form);

int allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
              MPI_Datatype rtype, MPI_Comm comm, const collective::Form& form);
int allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
               const int displs[], MPI_Datatype rtype, MPI_Comm comm, const collective::Form& form);
int gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
           MPI_Datatype rtype, int root, MPI_Comm comm, const collective::Form& form);
int gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
            const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm,
            const collective::Form& form);
int scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
            MPI_Datatype rtype, int root, MPI_Comm comm, const collective::Form& form);
int scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
             void* rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
             const collective::Form& form);
int bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
          const collective::Form& form);

int reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, const collective::Form& form);
int allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              const collective::Form& form);
int reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, const collective::Form& form);
int reduce_scatter_block(const void* sbuf, void* rbuf, int rcount, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm, const collective::Form& form);
int scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         const collective::Form& form);
int exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
           const collective::Form& form);

// A topology communicator's in- and out-degrees; false when it has no topology (the MPI
// reports it), with `rejected` the MPI's error where it rejected the communicator (its error
// handler has run).
bool neighbor_degrees(MPI_Comm comm, int& in, int& out, int& rejected);
int neighbor_allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                       MPI_Datatype rtype, MPI_Comm comm, const collective::Form& form);
int neighbor_allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                        const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                        const collective::Form& form);
int neighbor_alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                      MPI_Datatype rtype, MPI_Comm comm, const collective::Form& form);
int neighbor_alltoallv(const void* sbuf, const int scounts[], const int sdispls[],
                       MPI_Datatype stype, void* rbuf, const int rcounts[], const int rdispls[],
                       MPI_Datatype rtype, MPI_Comm comm, const collective::Form& form);
int neighbor_alltoallw(const void* sbuf, const int scounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype stypes[], void* rbuf, const int rcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                       const collective::Form& form);

}  // namespace strider::calls
