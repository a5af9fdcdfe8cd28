#include "calls/p2p_operations.hpp"

#include <atomic>

#include "offers/protocol.hpp"

namespace strider::calls {

int SendOperation::complete(MPI_Status&, int) {
  release(out_);
  return MPI_SUCCESS;
}

ReceiveOperation::ReceiveOperation(transfer::Incoming in) : in_(std::move(in)) {
  static std::atomic<std::uint64_t> made{0};
  serial_ = made.fetch_add(1, std::memory_order_relaxed);
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
