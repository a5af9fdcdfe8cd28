/* Links against the installed libstrider and checks it is the one serving MPI_Pack. */
#include <mpi.h>
#include <stdio.h>
#include <strider/strider.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Datatype t;
  MPI_Type_vector(4, 1, 2, MPI_INT, &t);
  MPI_Type_commit(&t);
  int data[8] = {0, 1, 2, 3, 4, 5, 6, 7}, packed[4], position = 0;
  MPI_Pack(data, 1, t, packed, sizeof packed, &position, MPI_COMM_WORLD);
  strider_stats s;
  const int written = strider_get_stats_sized(&s, sizeof s);
  const int ok = position == 16 && packed[0] == 0 && packed[3] == 6 && written == (int)sizeof s &&
                 s.packs_host == 1;
  printf("strider %s: %s\n", strider_version(), ok ? "installed package works" : "FAILED");
  MPI_Type_free(&t);
  MPI_Finalize();
  return ok ? 0 : 1;
}
