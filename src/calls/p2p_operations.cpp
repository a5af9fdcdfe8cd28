#include "calls/p2p_operations.hpp"

#include "offers/protocol.hpp"

namespace strider::calls {

int SendOperation::complete(MPI_Status&, int) {
  release(out_);
  return MPI_SUCCESS;
}

int ReceiveOperation::complete(MPI_Status& status, int error) {
  return transfer::complete_incoming(in_, status, error);
}

int ReceiveOperation::observe_complete(MPI_Status& status) {
  return transfer::unpack_incoming(in_, status, MPI_SUCCESS);
}

bool ReceiveOperation::may_cancel() { return offers::may_cancel(in_); }

int ObservedReceive::complete(MPI_Status& status, int error) {
  offers::observe(watch_, status, error);
  return MPI_SUCCESS;
}

}  // namespace strider::calls
