// The one place Strider asks which processes share its node. Everything it decides by node
// (the offers board, same-node collectives, the model's peer placement) goes through here, so
// that the test-only STRIDER_TEST_NODE_SIZE splits one machine into virtual nodes for all of
// them alike. GPU selection is the application's and stays physical.
#pragma once

#include <mpi.h>

namespace strider::runtime {

// Collective over `comm` (an intracommunicator): `*node` gets the ranks of `comm` on this
// process's node, in `comm`'s order; free it with PMPI_Comm_free. The node is the shared-memory
// one (MPI_COMM_TYPE_SHARED), split further, where STRIDER_TEST_NODE_SIZE=N is set, into virtual
// nodes of N consecutive world ranks (world ranks 0..N-1, N..2N-1, ...). Returns the MPI's error
// code; `*node` is MPI_COMM_NULL on failure.
int node_communicator(MPI_Comm comm, MPI_Comm* node);

}  // namespace strider::runtime
