// Whether a peer shares this process's node. Learned once, collectively, at MPI_Init, and
// only on a CUDA-aware MPI: it matters only for the device method's transfer. Every rank must
// then run Strider (preloaded, not disabled), as it calls collectives on MPI_COMM_WORLD there.
#pragma once

#include <mpi.h>

#include "model/perf_data.hpp"

namespace strider::transfer {

// Collective over MPI_COMM_WORLD: which world ranks share a node (runtime::node_communicator).
void learn_node_layout();

// `rank` of `comm`. Unknown peers (MPI_ANY_SOURCE, processes outside MPI_COMM_WORLD, any peer
// when the layout is not known) are Remote unless the whole job started on one node. Other
// communicators' peers are translated once per communicator and cached as an attribute.
model::Placement peer_placement(MPI_Comm comm, int rank);

}  // namespace strider::transfer
