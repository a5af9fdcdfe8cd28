#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  static char s[6][256], r[256];
  if (rank == 0) {
    MPI_Request q[4];
    MPI_Send_init(s[0], 256, MPI_PACKED, 1, 30, MPI_COMM_WORLD, &q[0]);
    MPI_Send_init(s[1], 256, MPI_PACKED, 1, 31, MPI_COMM_WORLD, &q[1]);
    MPI_Start(&q[0]);
    MPI_Start(&q[1]);
    MPI_Send(s[2], 256, MPI_PACKED, 1, 32, MPI_COMM_WORLD);
    MPI_Issend(s[3], 256, MPI_PACKED, 1, 33, MPI_COMM_WORLD, &q[2]);
    MPI_Send_init(s[4], 256, MPI_PACKED, 1, 34, MPI_COMM_WORLD, &q[3]);
    MPI_Start(&q[3]);
    MPI_Send(s[5], 256, MPI_PACKED, 1, 35, MPI_COMM_WORLD);
    MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    MPI_Request_free(&q[3]);
    printf("first part done\n");
    fflush(stdout);
    MPI_Request x;
    MPI_Issend(s[0], 256, MPI_PACKED, 1, 80, MPI_COMM_WORLD, &x);
    MPI_Cancel(&x);
    printf("issend cancel returned\n");
    fflush(stdout);
  } else {
    for (int k = 0; k < 6; ++k)
      MPI_Recv(r, 256, MPI_PACKED, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Abort(MPI_COMM_WORLD, 0);
  return 0;
}
