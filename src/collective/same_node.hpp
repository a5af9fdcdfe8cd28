// Same-node collectives, GPU to GPU: when every rank of an intracommunicator runs on this node
// with its buffers in GPU memory, each packs its outgoing pieces into a device wire (one
// kernel), its peers map that wire through CUDA IPC, and each unpacks its incoming pieces
// straight from the wires they came from (one kernel). No byte goes through host memory or the
// MPI. Served: the blocking all-to-alls, allgathers, gathers, scatters, broadcasts and
// neighbourhood collectives.
//
// Protocol, every rank at the same blocking call:
//   1. once per communicator (cached on it): are all ranks on one node
//      (runtime::node_communicator), with a GPU? If not, nothing more is ever asked on it.
//      (STRIDER_SAME_NODE=0, the same on every rank: never.)
//   2. The MPI's own collective of the call's shape moves one small record per piece (MPI_BYTE):
//      whether the sender can take part, its rank, its wire's IPC handle, and the piece's
//      offset and packed bytes in that wire; or, for a piece read in place (direct_layout.hpp),
//      its segments in the sender's layout and its allocations' IPC handles (that piece is not
//      packed). The MPI's matching thus puts into each receive
//      slot the record of the piece the MPI would have delivered there, repeated and self
//      neighbours included.
//   3. Each rank maps the wires its records name, checks that every piece it receives has the
//      bytes it expects, and packs its own wire. MPI_Allreduce(MIN) of that: all ready, or every
//      rank takes the packed path (where the MPI reports a size mismatch as it would).
//   4. Each rank unpacks from the mapped wires, copies the pieces read in place from the
//      senders' layouts into its own (and an all-to-all's own piece layout to layout) in one
//      kernel; then MPI_Barrier, after which no peer reads its wire or its buffers any more.
// Nonblocking forms and intercommunicators take the packed path: a nonblocking call may not
// wait for its peers.
#pragma once

#include <mpi.h>

#include "collective/call.hpp"

namespace strider::collective {

// How a call's records travel (step 2), and what its sides hold on this rank.
struct SameNodeShape {
  enum class Exchange {
    Alltoall,           // a record per peer each way (MPI_Alltoall)
    Allgather,          // one record to every peer (MPI_Allgather)
    Gather,             // one record from every rank to the root (MPI_Gather)
    Scatter,            // one record from the root to every rank (MPI_Scatter)
    Bcast,              // the root's one record to every rank (MPI_Bcast)
    NeighborAlltoall,   // a record per out- and per in-neighbour (MPI_Neighbor_alltoall)
    NeighborAllgather,  // one record to every out-neighbour (MPI_Neighbor_allgather)
  };
  Exchange exchange = Exchange::Alltoall;
  int root = 0;                 // the rooted exchanges'
  int send_records = 0;         // records this rank sends: its source pieces
  int recv_records = 0;         // records it receives: one per receive slot
  int recv_pieces = 0;          // its receive pieces (fewer than slots only at an in-place root)
  bool source_is_recv = false;  // in place: the source pieces are on the receive side
  int source_first = 0;         // the source piece of record 0 (in place: this rank's slot)
  // This rank's own piece, send piece `own_send` and receive slot `own_recv` (-1: none). The
  // slot is never read from a wire; `copy_own`: the piece is copied straight across (else it
  // stays where it is, in place); `own_send_private`: the send piece goes to no one else.
  int own_send = -1, own_recv = -1;
  bool copy_own = false;
  bool own_send_private = false;
};

// Whether the ranks of `comm` (an intracommunicator of `size` ranks) all run on this node with a
// GPU (step 1), and all on one GPU. Collective on the first call for `comm`, then cached on it; a
// duplicate asks again.
struct SameNodeVerdict {
  bool same_node = false;
  bool one_gpu = false;
};
SameNodeVerdict same_node_verdict(MPI_Comm comm, int size);

// Every rank of `comm` calls this at every blocking call of the shape, also a rank about to
// forward (`call` null). True when the call was done here, with its result in `rc`; false when
// every rank takes its usual path.
bool same_node_collective(MPI_Comm comm, const SameNodeShape& shape, Call* call, int& rc);

// Frees the communicator attribute's key (MPI_Finalize).
void free_same_node_keyval();

}  // namespace strider::collective
