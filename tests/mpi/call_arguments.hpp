// Arguments for calling each point-to-point and collective entry point once on every rank, for
// tests that compare Strider's answer to a call with the MPI's own (PMPI_): a strided type (the
// packed path's), buffers of 64 ints per rank, counts of 1, and per-rank displacements in
// elements of `vec_` (12 ints apart) and in bytes.
#pragma once

#include <mpi.h>

#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {

class CallArguments {
 protected:
  void make_arguments() {
    MPI_Type_vector(3, 2, 4, MPI_INT, &vec_);
    MPI_Type_commit(&vec_);
    size_ = world_size();
    peer_ = (world_rank() + 1) % size_;
    const auto n = static_cast<std::size_t>(size_);
    send_.assign(64 * n, 1);
    recv_.assign(64 * n, 0);
    counts_.assign(n, 1);
    displs_.resize(n);
    byte_displs_.resize(n);
    types_.assign(n, vec_);
    for (std::size_t i = 0; i < n; ++i) {
      displs_[i] = 12 * static_cast<int>(i);
      byte_displs_[i] = 48 * static_cast<int>(i);
    }
  }
  void free_arguments() {
    if (vec_ != MPI_DATATYPE_NULL) MPI_Type_free(&vec_);
  }

  MPI_Datatype vec_ = MPI_DATATYPE_NULL;
  int size_ = 1, peer_ = 0;
  std::vector<int> send_, recv_, counts_, displs_, byte_displs_;
  std::vector<MPI_Datatype> types_;
};

}  // namespace strider::testing
