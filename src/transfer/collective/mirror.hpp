// Reductions on GPU buffers go through the MPI's own operation on host copies: a mirror is the
// host copy of the span a buffer's elements cover, gaps included, so the MPI sees the
// application's own type and op (any op, user-defined ones too) and leaves the gaps as they
// were. For the predefined types of most reductions the span is the data itself.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "transfer/wire_buffers.hpp"

namespace strider::transfer::collective {

class Mirror {
 public:
  // Describes the span of `count` elements of `type` at `buffer`. False when it is not
  // Strider's (host memory without STRIDER_COLL_HOST=pack, an unknown type, nothing to move):
  // the MPI takes the buffer as it is. `input`: the MPI reads it (loaded before the call);
  // `output`: the MPI writes it (stored back after).
  bool describe(const void* buffer, int count, MPI_Datatype type, bool input, bool output);
  // The address the MPI is given in place of the buffer.
  void* origin() const { return wire_.data() - lo_; }

  int load(MPI_Comm comm);   // takes the host memory; copies the span in if needed
  int store(MPI_Comm comm);  // copies an output span back

 private:
  std::byte* buffer_ = nullptr;  // the application's
  std::int64_t lo_ = 0, bytes_ = 0;
  bool input_ = false, output_ = false, gpu_ = false;
  bool dense_ = false;  // the span is all data: an output only need not be loaded
  WireBuffer wire_;
};

}  // namespace strider::transfer::collective
