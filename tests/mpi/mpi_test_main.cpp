// main() of the MPI tests: MPI around GoogleTest, errors returned rather than fatal.
#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_test_support.hpp"

// One MPI process per rank runs every test; a failure on any rank fails the run.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, strider::testing::thread_level_asked(), &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed ? 1 : 0;
}
