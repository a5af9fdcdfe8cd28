#include "test_nodes.hpp"

#include <mpi.h>

#include "mpi_test_support.hpp"

namespace strider::testing {

long expected_node_size() {
  const long expect = env_long("STRIDER_TEST_EXPECT_NODE_SIZE", -1);
  return expect >= 0 ? expect : env_long("STRIDER_TEST_NODE_SIZE", 0);
}

std::vector<long> world_nodes() {
  const int me = world_rank(), n = world_size();
  // The shared-memory node, named by its lowest world rank.
  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  int leader = me;
  MPI_Allreduce(&me, &leader, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);
  const long size = expected_node_size();
  const long mine = static_cast<long>(leader) * (n + 1) + (size > 0 ? me / size : 0);
  std::vector<long> nodes(static_cast<std::size_t>(n));
  MPI_Allgather(&mine, 1, MPI_LONG, nodes.data(), 1, MPI_LONG, MPI_COMM_WORLD);
  return nodes;
}

}  // namespace strider::testing
