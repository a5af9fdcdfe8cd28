#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm cart;
  int dims[1] = {1}, periods[1] = {0};
  MPI_Cart_create(MPI_COMM_SELF, 1, dims, periods, 0, &cart);
  int s = 42, r[2] = {-7, -7};
  int rc = MPI_Neighbor_allgather(&s, 1, MPI_INT, r, 1, MPI_INT, cart);
  printf("allgather rc %d r = %d %d\n", rc, r[0], r[1]);
  int rv[2] = {-7, -7}, counts[2] = {1, 1}, displs[2] = {0, 1};
  rc = MPI_Neighbor_allgatherv(&s, 1, MPI_INT, rv, counts, displs, MPI_INT, cart);
  printf("allgatherv rc %d r = %d %d\n", rc, rv[0], rv[1]);
  int a[2] = {5, 6}, b[2] = {-7, -7};
  rc = MPI_Neighbor_alltoall(a, 1, MPI_INT, b, 1, MPI_INT, cart);
  printf("alltoall rc %d r = %d %d\n", rc, b[0], b[1]);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return 0;
}
