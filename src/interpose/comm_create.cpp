// The calls that make an intracommunicator from every member at once: each new communicator is
// named for the same-node offers right after the MPI made it (one MPI_Allreduce over it,
// offers/comm_ledgers.hpp), so that point-to-point on it can use them. Communicators
// made otherwise (MPI_Comm_idup, intercommunicators, MPI-4's from-group calls) or reaching into
// another MPI_COMM_WORLD stay unnamed: their messages go the usual way.
#include <mpi.h>

#include "calls/deferred_sends.hpp"
#include "interpose/export.hpp"
#include "offers/protocol.hpp"
#include "transfer/next.hpp"

namespace {

// The MPI's result, unchanged.
int named(int rc, const MPI_Comm* made) {
  if (rc == MPI_SUCCESS && made != nullptr) strider::offers::comm_made(*made);
  return rc;
}

}  // namespace

STRIDER_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Comm_dup)(comm, newcomm), newcomm);
}

STRIDER_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Comm_dup_with_info)(comm, info, newcomm), newcomm);
}

STRIDER_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Comm_split)(comm, color, key, newcomm), newcomm);
}

STRIDER_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                       MPI_Comm* newcomm) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Comm_split_type)(comm, split_type, key, info, newcomm), newcomm);
}

STRIDER_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Comm_create)(comm, group, newcomm), newcomm);
}

STRIDER_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                         MPI_Comm* newcomm) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Comm_create_group)(comm, group, tag, newcomm), newcomm);
}

STRIDER_EXPORT int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                                   int reorder, MPI_Comm* cart) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Cart_create)(comm, ndims, dims, periods, reorder, cart), cart);
}

STRIDER_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Cart_sub)(comm, remain_dims, newcomm), newcomm);
}

STRIDER_EXPORT int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                                    int reorder, MPI_Comm* graph) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Graph_create)(comm, nnodes, index, edges, reorder, graph), graph);
}

STRIDER_EXPORT int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                                         const int degrees[], const int destinations[],
                                         const int weights[], MPI_Info info, int reorder,
                                         MPI_Comm* graph) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Dist_graph_create)(comm, n, sources, degrees, destinations, weights,
                                                   info, reorder, graph),
               graph);
}

STRIDER_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                                  const int sourceweights[], int outdegree,
                                                  const int destinations[], const int destweights[],
                                                  MPI_Info info, int reorder, MPI_Comm* graph) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Dist_graph_create_adjacent)(comm, indegree, sources, sourceweights,
                                                            outdegree, destinations, destweights,
                                                            info, reorder, graph),
               graph);
}

STRIDER_EXPORT int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newcomm) {
  const strider::calls::EntryCall entry;
  return named(STRIDER_NEXT(MPI_Intercomm_merge)(intercomm, high, newcomm), newcomm);
}
