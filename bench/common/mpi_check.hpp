// MPI_CHECK for the benchmarks: a failed MPI call prints where and why, and aborts the job (MPI's
// default handler already aborts; this also covers communicators set to return errors).
#pragma once

#include <mpi.h>

#include <cstdio>

#define MPI_CHECK(call)                                                         \
  do {                                                                          \
    const int rc_ = (call);                                                     \
    if (rc_ != MPI_SUCCESS) {                                                   \
      char msg_[MPI_MAX_ERROR_STRING] = {};                                     \
      int len_ = 0;                                                             \
      MPI_Error_string(rc_, msg_, &len_);                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, msg_); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                             \
    }                                                                           \
  } while (0)
