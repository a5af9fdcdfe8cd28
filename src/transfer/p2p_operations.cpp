#include "transfer/p2p_operations.hpp"

namespace strider::transfer {

int SendOperation::complete(const MPI_Status&, bool) {
  release(out_);
  return MPI_SUCCESS;
}

int ReceiveOperation::complete(const MPI_Status& status, bool succeeded) {
  return complete_incoming(in_, status, succeeded);
}

int ReceiveOperation::observe_complete(const MPI_Status& status) {
  return unpack_incoming(in_, status, true);
}

}  // namespace strider::transfer
