// Whether a peer shares this process's node. Learned once, collectively, at MPI_Init.
#pragma once

#include <mpi.h>

#include "model/perf_data.hpp"

namespace strider::transport {

// Collective over MPI_COMM_WORLD: which world ranks share a node (MPI_COMM_TYPE_SHARED).
void learn_node_layout();

// `rank` of `comm`. Unknown peers (MPI_ANY_SOURCE, before learn_node_layout) are Remote unless
// the whole job runs on one node.
model::Placement peer_placement(MPI_Comm comm, int rank);

}  // namespace strider::transport
