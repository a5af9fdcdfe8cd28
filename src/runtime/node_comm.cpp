#include "runtime/node_comm.hpp"

#include "runtime/config.hpp"

namespace strider::runtime {

int node_communicator(MPI_Comm comm, MPI_Comm* node) {
  *node = MPI_COMM_NULL;
  MPI_Comm shared = MPI_COMM_NULL;
  const int rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  const int virtual_size = config().test_node_size;
  if (rc != MPI_SUCCESS || virtual_size <= 0) {
    *node = shared;
    return rc;
  }
  // By world rank, not `comm`'s, so that every communicator sees the same virtual nodes.
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const int split = PMPI_Comm_split(shared, world_rank / virtual_size, 0, node);
  PMPI_Comm_free(&shared);
  if (split != MPI_SUCCESS) *node = MPI_COMM_NULL;
  return split;
}

}  // namespace strider::runtime
