// Early arrivals (docs/bursts.md, "Waves across completion calls"): a loop that completes its
// receives one call at a time (MPI_Waitany, MPI_Testany, MPI_Wait, MPI_Test) would unpack each
// alone, one kernel and one wait apiece. Where the application's last completion call that
// finished receives finished one, Strider notes its next nonblocking receives that a wave's
// kernel could unpack; a completion call that unpacks a receive then asks the MPI
// (MPI_Request_get_status, which completes nothing) whether the longest waiting of those have
// arrived too, and unpacks them in the same wave. Their requests stay the MPI's, complete and
// live: the call that later completes one gets its status and error from the MPI as before, and
// finds its data in place. Below MPI_THREAD_MULTIPLE only, with STRIDER_BURST on.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "transfer/operation.hpp"

namespace strider::calls {

// A nonblocking receive without a same-node offer that a wave's kernel could unpack was posted
// under `request` and tracked (Operation::tracked_as): noted where a later completion call may
// unpack it early.
void note_posted(MPI_Request request, std::uint64_t tracked_as);
// Whether any receive is noted (one load).
bool any_noted();

// A noted receive the MPI has seen complete, taken from the request table for the calling
// completion call's wave.
struct EarlyArrival {
  MPI_Request request = MPI_REQUEST_NULL;
  transfer::OperationPtr op;
  MPI_Status status{};
};
// Those of the longest waiting noted receives no completion call holds that have arrived as a
// wave's kernel unpacks them (transfer::plain_arrival; none where none is noted).
std::vector<EarlyArrival> collect_arrivals();

// Puts each arrival back under its request when it goes (counted in receives_early where its
// wave unpacked it), however the wave ended.
class ArrivalsBack {
 public:
  explicit ArrivalsBack(std::vector<EarlyArrival>& arrivals) : arrivals_(arrivals) {}
  ~ArrivalsBack();
  ArrivalsBack(const ArrivalsBack&) = delete;
  ArrivalsBack& operator=(const ArrivalsBack&) = delete;

 private:
  std::vector<EarlyArrival>& arrivals_;
};

}  // namespace strider::calls
