// main() of the GPU tests: without a usable CUDA device they skip (exit 77, which CTest
// reports as skipped) and say so; with one, each rank takes a GPU and runs every test.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include "gpu_available.hpp"
#include "mpi_test_support.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!strider::testing::gpu_available()) return strider::testing::kSkipExitCode;
  int devices = 1;
  cudaGetDeviceCount(&devices);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, strider::testing::thread_level_asked(), &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  cudaSetDevice(strider::testing::node_local_rank() % devices);
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed ? 1 : 0;
}
