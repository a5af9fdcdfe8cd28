// main() of reduction_gaps_test (host build, and GPU build with STRIDER_P2P_TEST_GPU): as
// mpi_test_main.cpp / tests/gpu/gpu_test_main.cpp, but the thread level defaults to
// MPI_THREAD_FUNNELED, the level of an application whose helper threads touch its buffers while
// its main thread calls MPI (ReductionGapsThread). STRIDER_TEST_THREAD=single|funneled|
// serialized|multiple picks another.
#include <gtest/gtest.h>
#include <mpi.h>

#ifdef STRIDER_P2P_TEST_GPU
#include <cuda_runtime.h>

#include "gpu_available.hpp"
#endif
#include "mpi_test_support.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
#ifdef STRIDER_P2P_TEST_GPU
  if (!strider::testing::gpu_available()) return strider::testing::kSkipExitCode;
  int devices = 1;
  cudaGetDeviceCount(&devices);
#endif
  int provided = 0;
  MPI_Init_thread(&argc, &argv, strider::testing::thread_level_asked(MPI_THREAD_FUNNELED),
                  &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
#ifdef STRIDER_P2P_TEST_GPU
  cudaSetDevice(strider::testing::node_local_rank() % devices);
#endif
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed ? 1 : 0;
}
