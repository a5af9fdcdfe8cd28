// Same-node all-to-all, GPU to GPU: when every rank of an intracommunicator runs on this node
// with its buffers in GPU memory, each packs its outgoing pieces into a device wire (one
// kernel), the peers map that wire through CUDA IPC, and each unpacks its incoming pieces
// straight from its peers' wires (one kernel). No byte goes through host memory or the MPI.
//
// Protocol, every rank at the same blocking Alltoall/Alltoallv/Alltoallw:
//   1. once per communicator (cached on it): are all ranks on one node, with a GPU, and
//      STRIDER_SAME_NODE on? If not, nothing more is ever asked on it.
//   2. MPI_Allgather of a record: whether this rank can take part (both sides GPU pieces the
//      batch kernel takes, a device wire exported), the wire's IPC handle, and per peer the
//      offset and packed bytes of the piece it sends that peer. Any rank that cannot: every
//      rank takes its usual path (nothing has been written).
//   3. Each rank maps its peers' wires, checks that every piece it receives has the bytes it
//      expects, and packs its own wire. MPI_Allreduce(MIN) of that: all ready, or every rank
//      takes the usual path (where the MPI reports a size mismatch as it would).
//   4. Each rank unpacks from the peers' wires and copies its own piece directly; then
//      MPI_Barrier, after which no peer reads its wire any more and it goes back to the pool.
// Nonblocking forms and intercommunicators always take the usual path: a nonblocking call may
// not wait for its peers.
#pragma once

#include <mpi.h>

#include "transfer/collective/call.hpp"

namespace strider::transfer::collective {

// Every rank of `comm` calls this at every blocking all-to-all, also a rank about to forward
// (`call` null). True when the call was done here, with its result in `rc`; false when every
// rank takes its usual path. `in_place`: the send pieces are the receive pieces.
bool same_node_alltoall(MPI_Comm comm, const Group& g, Call* call, bool in_place, int& rc);

// Frees the communicator attribute's key (MPI_Finalize).
void free_same_node_keyval();

}  // namespace strider::transfer::collective
