#include "calls/large_count.hpp"

namespace strider::calls {

int array_peers(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return -1;
  int inter = 0, n = -1;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return -1;
  const int rc = inter ? PMPI_Comm_remote_size(comm, &n) : PMPI_Comm_size(comm, &n);
  return rc == MPI_SUCCESS ? n : -1;
}

int root_array_peers(MPI_Comm comm, int root) {
  if (comm == MPI_COMM_NULL) return -1;
  int inter = 0, rank = -1;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return -1;
  if (inter) return root == MPI_ROOT ? array_peers(comm) : 0;
  if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return -1;
  return rank == root ? array_peers(comm) : 0;
}

}  // namespace strider::calls
