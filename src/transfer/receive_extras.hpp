// What a layer above transfer attaches to a receive Strider finishes (the same-node offers':
// offers/receive_state.hpp): transfer holds it and calls it through this interface only, so that
// nothing in transfer reaches up to the layer that implements it.
#pragma once

#include <mpi.h>

namespace strider::transfer {

struct Incoming;

class ReceiveExtras {
 public:
  virtual ~ReceiveExtras() = default;
  // The receive completed with `error` (the MPI's): true when the data came another way and
  // was delivered by the extras (`rc` is then the result and `in`'s wire is not unpacked).
  virtual bool settle(Incoming& in, MPI_Status& status, int error, int& rc) = 0;
  // Whether settle still has work: false once the data is known to be in the wire (or the
  // receive made no offer) and the extras have seen the completion, so that an arrival wave may
  // unpack the wire without calling settle.
  virtual bool unsettled() const = 0;
  // The receive's resources go (complete, or never posted): whatever was offered is withdrawn.
  virtual void release() = 0;
};

}  // namespace strider::transfer
