#include "calls/large_count.hpp"

namespace strider::calls {

int array_peers(MPI_Comm comm, int& rejected) {
  rejected = MPI_SUCCESS;
  if (comm == MPI_COMM_NULL) return -1;
  int inter = 0, n = -1;
  rejected = PMPI_Comm_test_inter(comm, &inter);
  if (rejected != MPI_SUCCESS) return -1;
  rejected = inter ? PMPI_Comm_remote_size(comm, &n) : PMPI_Comm_size(comm, &n);
  return rejected == MPI_SUCCESS ? n : -1;
}

int root_array_peers(MPI_Comm comm, int root, int& rejected) {
  rejected = MPI_SUCCESS;
  if (comm == MPI_COMM_NULL) return -1;
  int inter = 0, rank = -1;
  rejected = PMPI_Comm_test_inter(comm, &inter);
  if (rejected != MPI_SUCCESS) return -1;
  if (inter) return root == MPI_ROOT ? array_peers(comm, rejected) : 0;
  rejected = PMPI_Comm_rank(comm, &rank);
  if (rejected != MPI_SUCCESS) return -1;
  return rank == root ? array_peers(comm, rejected) : 0;
}

}  // namespace strider::calls
