// CUDA_CHECK for the MPI benchmarks: a failed CUDA call prints where and aborts the job.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>

#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    const cudaError_t rc_ = (call);                                                                \
    if (rc_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(rc_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)
