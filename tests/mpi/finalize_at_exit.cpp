// MPI_Finalize from an atexit handler registered before MPI_Init, as MPICH's test suite and some
// applications do (no gtest: main returns, exit runs the handler). By then every function-local
// static that Strider made after the handler was registered has been destroyed, so whatever
// MPI_Finalize (or a call before it) still reaches must outlive them: Strider's plan cache did
// not, and MPI_Finalize wrote into its freed memory. Run under valgrind by CTest
// (tests/mpi/CMakeLists.txt, finalize_at_exit_test), which fails on any invalid access in
// Strider's frames. The calls below make Strider build its caches and tables first: committed
// types, packed point-to-point (offers on one node), persistent requests, a communicator it
// names, collectives and reductions.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void finish() { MPI_Finalize(); }

int check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "finalize_at_exit: %s failed (%d)\n", what, rc);
    std::exit(2);
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  std::atexit(finish);
  check(MPI_Init(&argc, &argv), "MPI_Init");
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int peer = (rank + 1) % size, from = (rank + size - 1) % size;

  MPI_Datatype vec = MPI_DATATYPE_NULL;
  MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  std::vector<int> out(12), in(12, -1), in2(12, -1);
  for (int i = 0; i < 12; ++i) out[i] = rank * 100 + i;

  check(MPI_Sendrecv(out.data(), 1, vec, peer, 1, in.data(), 1, vec, from, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
  MPI_Request r[4];
  MPI_Irecv(in2.data(), 1, vec, from, 2, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(out.data(), 1, vec, peer, 2, MPI_COMM_WORLD, &r[1]);
  check(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
  MPI_Recv_init(in2.data(), 1, vec, from, 3, MPI_COMM_WORLD, &r[2]);
  MPI_Send_init(out.data(), 1, vec, peer, 3, MPI_COMM_WORLD, &r[3]);
  for (int round = 0; round < 2; ++round) {
    MPI_Startall(2, &r[2]);
    int index = 0;
    for (int k = 0; k < 2; ++k) check(MPI_Waitany(2, &r[2], &index, MPI_STATUS_IGNORE), "Waitany");
  }
  MPI_Request_free(&r[2]);
  MPI_Request_free(&r[3]);

  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  std::vector<int> all(static_cast<std::size_t>(12 * size), -1);
  check(MPI_Allgather(out.data(), 1, vec, all.data(), 1, vec, dup), "MPI_Allgather");
  int sum = 0;
  check(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup), "MPI_Allreduce");
  MPI_Comm_free(&dup);
  MPI_Type_free(&vec);

  int wrong = in[0] != from * 100 || in[2] != -1 || in2[4] != from * 100 + 4 ||
              sum != size * (size - 1) / 2;
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf(wrong ? "finalize_at_exit: wrong data\n" : " No Errors\n");
  return wrong;  // exit runs finish()
}
