// Reductions on GPU buffers go through the MPI's own operation on host copies: a mirror is a
// host buffer laid out like the application's span, so the MPI sees the application's own type
// and op (any op, user-defined ones too). Only the typemap's bytes move between the two, in
// either direction: the gaps of the application's buffer are never read (they may be unmapped)
// nor written (the application, an Irecv, another reduction or a thread may be writing them).
#pragma once

#include <mpi.h>

#include <cstdint>

#include "ipc/wire_buffers.hpp"
#include "transfer/object.hpp"
#include "transfer/wire.hpp"

namespace strider::collective {

class Mirror {
 public:
  // Describes `count` elements of `type` at `buffer`. False when it is not Strider's (host
  // memory without STRIDER_COLL_HOST=pack, an unknown type, nothing to move): the MPI takes the
  // buffer as it is. `input`: the MPI reads it (loaded before the call); `output`: the MPI
  // writes it (stored back after).
  bool describe(const void* buffer, int count, MPI_Datatype type, bool input, bool output);
  // The address the MPI is given in place of the buffer.
  void* origin() const { return wire_.data() - lo_; }

  // Takes the host memory. A nonblocking or persistent call's type must outlive the
  // application's handle where the MPI packs it: `hold` duplicates it.
  int acquire(MPI_Comm comm, bool hold);
  int load(MPI_Comm comm);   // copies an input's typemap bytes in
  int store(MPI_Comm comm);  // copies an output's typemap bytes back

 private:
  transfer::Object object_;  // the application's elements
  transfer::Object mirror_;  // the same elements in the host copy (valid after acquire)
  transfer::HeldType held_;
  std::int64_t lo_ = 0, bytes_ = 0;
  bool input_ = false, output_ = false;
  bool dense_ = false;  // the span is all data: it moves as one copy
  ipc::WireBuffer wire_;
};

}  // namespace strider::collective
