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

using strider::collective::Form;

// The three `_c` forms of a collective whose counts are scalars: PARAMS the blocking form's
// parameter list, BUFFERS its buffers and COUNTS its counts (both parenthesized), ARGS its argument
// list, NARROWED the same with the counts as ints (`narrow`).
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
                            (sbuf, rbuf, narrow(count), type, op, comm))

namespace {

// Where a count does not fit, the call forwards only (Form::forward_only) and the value is 0.
constexpr int narrow(MPI_Count count) { return strider::calls::narrow_or_zero(count); }

}  // namespace

// clang-format off
STRIDER_LARGE_COUNT_FORMS(Allgather, Iallgather, allgather, (sbuf, rbuf),
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, comm))
STRIDER_LARGE_COUNT_FORMS(Alltoall, Ialltoall, alltoall, (sbuf, rbuf),
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, comm))
STRIDER_LARGE_COUNT_FORMS(Gather, Igather, gather, (sbuf, rbuf),
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, root, comm))
STRIDER_LARGE_COUNT_FORMS(Scatter, Iscatter, scatter, (sbuf, rbuf),
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, root, comm))
STRIDER_LARGE_COUNT_FORMS(Bcast, Ibcast, bcast, (buf),
    (void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm),
    ({count}),
    (buf, count, type, root, comm),
    (buf, narrow(count), type, root, comm))
STRIDER_LARGE_COUNT_FORMS(Reduce, Ireduce, reduce, (sbuf, rbuf),
    (const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm),
    ({count}),
    (sbuf, rbuf, count, type, op, root, comm),
    (sbuf, rbuf, narrow(count), type, op, root, comm))
STRIDER_LARGE_COUNT_REDUCTION(Allreduce, Iallreduce, allreduce)
STRIDER_LARGE_COUNT_REDUCTION(Reduce_scatter_block, Ireduce_scatter_block, reduce_scatter_block)
STRIDER_LARGE_COUNT_REDUCTION(Scan, Iscan, scan)
STRIDER_LARGE_COUNT_REDUCTION(Exscan, Iexscan, exscan)
STRIDER_LARGE_COUNT_FORMS(Neighbor_allgather, Ineighbor_allgather, neighbor_allgather, (sbuf, rbuf),
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, comm))
STRIDER_LARGE_COUNT_FORMS(Neighbor_alltoall, Ineighbor_alltoall, neighbor_alltoall, (sbuf, rbuf),
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm),
    ({scount, rcount}),
    (sbuf, scount, stype, rbuf, rcount, rtype, comm),
    (sbuf, narrow(scount), stype, rbuf, narrow(rcount), rtype, comm))
// clang-format on
