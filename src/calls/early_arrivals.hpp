// Early arrivals (docs/bursts.md, "Waves across completion calls"): a loop that completes its
// receives one call at a time (MPI_Waitany, MPI_Testany, MPI_Wait, MPI_Test) would unpack each
// alone, one kernel and one wait apiece. Where the application's last completion call that
// finished receives finished one, Strider notes its next nonblocking receives; a completion call
// that unpacks a receive then asks the MPI (MPI_Request_get_status, which completes nothing)
// whether the oldest of those have arrived too, and unpacks them in the same wave. Their
// requests stay the MPI's, complete and live: the call that later completes one gets its status
// and error from the MPI as before, and finds its data in place. Below MPI_THREAD_MULTIPLE only,
// with STRIDER_BURST on.
#pragma once

#include <mpi.h>

#include <vector>

#include "transfer/operation.hpp"

namespace strider::calls {

class ReceiveOperation;

// A nonblocking receive that made no same-node offer (an offer's data mostly needs no unpack:
// asking for it would cost more than it saves) was posted under `request` as `op`: noted where a
// later completion call may unpack it early.
void note_posted(MPI_Request request, const ReceiveOperation* op);

// A noted receive the MPI has seen complete, taken from the request table for the calling
// completion call's wave.
struct EarlyArrival {
  MPI_Request request = MPI_REQUEST_NULL;
  transfer::OperationPtr op;
  MPI_Status status{};
};
// Those of the oldest noted receives no completion call holds that have arrived, whole (none
// where none is noted: one load).
std::vector<EarlyArrival> collect_arrivals();
// After their wave: each put back under its request.
void keep_arrivals(std::vector<EarlyArrival>& arrivals);

}  // namespace strider::calls
