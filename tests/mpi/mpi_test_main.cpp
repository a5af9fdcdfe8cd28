// main() of the MPI tests: MPI around GoogleTest, errors returned rather than fatal.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>

// One MPI process per rank runs every test; a failure on any rank fails the run.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // STRIDER_TEST_THREAD=single: for MPI behaviour that differs with the thread level.
  const char* level = std::getenv("STRIDER_TEST_THREAD");
  const bool single = level != nullptr && std::strcmp(level, "single") == 0;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, single ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed ? 1 : 0;
}
