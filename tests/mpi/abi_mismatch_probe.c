/* A plain MPI program for an ABI other than the Strider build's (issue 23): point-to-point,
   a reduction, a derived type and a communicator split. Prints "abi probe: every check passed"
   on rank 0 when every rank saw the right results. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, ok = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int block[6] = {0, 0, 0, 0, 0, 0};
  MPI_Datatype every_other;
  MPI_Type_vector(3, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  if (rank == 0 && size > 1) {
    int sent[6] = {1, -1, 2, -1, 3, -1};
    MPI_Send(sent, 1, every_other, 1, 5, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Status status;
    MPI_Recv(block, 1, every_other, 0, 5, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_INT, &count);
    ok = count == 3 && block[0] == 1 && block[1] == 0 && block[2] == 2 && block[4] == 3;
  }
  MPI_Type_free(&every_other);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  ok = ok && sum == size * (size - 1) / 2;
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  int half_size = 0;
  MPI_Comm_size(half, &half_size);
  ok = ok && half_size == (size + (rank % 2 == 0)) / 2;
  MPI_Comm_free(&half);
  int all_ok = 0;
  MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
  if (rank == 0) printf(all_ok ? "abi probe: every check passed\n" : "abi probe: FAILED\n");
  MPI_Finalize();
  return all_ok || rank != 0 ? 0 : 1;
}
