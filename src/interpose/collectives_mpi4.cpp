// MPI-4's large-count collectives (`_c`) whose counts are scalars, for MPIs that have them
// (MPICH 4; mpi4py calls them wherever they exist, so its collectives on GPU buffers reach
// Strider only through these): blocking, nonblocking and persistent. Served through the classic
// paths where every count fits an int (calls/large_count.hpp); otherwise, and where Strider does
// not serve the call, the MPI's own `_c` call, after the steps every rank takes
// (collective::Form::forward_only).
// The forms with count arrays: collectives_mpi4_arrays.cpp.
#include <mpi.h>

#include "calls/collectives.hpp"
#include "calls/large_count.hpp"
#include "interpose/large_count_forms.hpp"

using strider::calls::narrow_or_zero;  // a count that does not fit: 0, and forward only
using strider::collective::Form;

// The three `_c` forms of a collective whose counts are scalars: PARAMS the blocking form's
// parameter list, BUFFERS its buffers and COUNTS its counts (both parenthesized), ARGS its argument
// list, NARROWED the same with the counts as ints (`narrow_or_zero`).
#define STRIDER_LARGE_COUNT_FORMS(Name, IName, call, BUFFERS, PARAMS, COUNTS, ARGS, NARROWED)     \
  STRIDER_LARGE_COUNT_ENTRIES(                                                                    \
      Name, IName, BUFFERS, PARAMS, ARGS, [&](const Form& form_, const auto& original_) {         \
        return strider::calls::call(                                                              \
            STRIDER_ARGS NARROWED,                                                                \
            strider::calls::large_count_form(form_, strider::calls::fits_int COUNTS, original_)); \
      })

// The reductions with one count and no root (Allreduce, Reduce_scatter_block, Scan, Exscan).
#define STRIDER_LARGE_COUNT_REDUCTION(Name, IName, call)                                       \
  STRIDER_LARGE_COUNT_FORMS(Name, IName, call, (sbuf, rbuf),                                   \
                            (const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, \
                             MPI_Op op, MPI_Comm comm),                                        \
                            ({count}), (sbuf, rbuf, count, type, op, comm),                    \
                            (sbuf, rbuf, narrow_or_zero(count), type, op, comm))

// The exchanges with a send and a receive count and no root (Allgather, Alltoall and their
// neighbourhood forms), and the rooted ones (Gather, Scatter).
#define STRIDER_LARGE_COUNT_EXCHANGE(Name, IName, call)                                      \
  STRIDER_LARGE_COUNT_FORMS(                                                                 \
      Name, IName, call, (sbuf, rbuf),                                                       \
      (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, \
       MPI_Datatype rtype, MPI_Comm comm),                                                   \
      ({scount, rcount}), (sbuf, scount, stype, rbuf, rcount, rtype, comm),                  \
      (sbuf, narrow_or_zero(scount), stype, rbuf, narrow_or_zero(rcount), rtype, comm))
#define STRIDER_LARGE_COUNT_ROOTED(Name, IName, call)                                        \
  STRIDER_LARGE_COUNT_FORMS(                                                                 \
      Name, IName, call, (sbuf, rbuf),                                                       \
      (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, \
       MPI_Datatype rtype, int root, MPI_Comm comm),                                         \
      ({scount, rcount}), (sbuf, scount, stype, rbuf, rcount, rtype, root, comm),            \
      (sbuf, narrow_or_zero(scount), stype, rbuf, narrow_or_zero(rcount), rtype, root, comm))

STRIDER_LARGE_COUNT_EXCHANGE(Allgather, Iallgather, allgather)
STRIDER_LARGE_COUNT_EXCHANGE(Alltoall, Ialltoall, alltoall)
STRIDER_LARGE_COUNT_EXCHANGE(Neighbor_allgather, Ineighbor_allgather, neighbor_allgather)
STRIDER_LARGE_COUNT_EXCHANGE(Neighbor_alltoall, Ineighbor_alltoall, neighbor_alltoall)
STRIDER_LARGE_COUNT_ROOTED(Gather, Igather, gather)
STRIDER_LARGE_COUNT_ROOTED(Scatter, Iscatter, scatter)
STRIDER_LARGE_COUNT_REDUCTION(Allreduce, Iallreduce, allreduce)
STRIDER_LARGE_COUNT_REDUCTION(Reduce_scatter_block, Ireduce_scatter_block, reduce_scatter_block)
STRIDER_LARGE_COUNT_REDUCTION(Scan, Iscan, scan)
STRIDER_LARGE_COUNT_REDUCTION(Exscan, Iexscan, exscan)
// clang-format off
STRIDER_LARGE_COUNT_FORMS(Bcast, Ibcast, bcast, (buf),
    (void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm),
    ({count}),
    (buf, count, type, root, comm),
    (buf, narrow_or_zero(count), type, root, comm))
STRIDER_LARGE_COUNT_FORMS(Reduce, Ireduce, reduce, (sbuf, rbuf),
    (const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm),
    ({count}),
    (sbuf, rbuf, count, type, op, root, comm),
    (sbuf, rbuf, narrow_or_zero(count), type, op, root, comm))
// clang-format on
