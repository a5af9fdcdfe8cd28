// A blocking call whose receive makes a same-node offer (MPI_Recv, MPI_Sendrecv) posts that
// receive nonblocking, publishes the offer only once the MPI has accepted it, then waits for it
// (docs/same-node-p2p.md): a receive the MPI refuses never had an offer, so no sender's notice
// can reach the stream's next receive. The MPI's calls for that, and the two steps that use
// them.
#pragma once

#include <mpi.h>

#include "offers/protocol.hpp"
#include "transfer/next.hpp"
#include "transfer/wire.hpp"

namespace strider::calls {

// `irecv(data, count, type, source, tag, comm, request)`: the MPI's Irecv of the call's count
// type; `wait` and `cancel`: the MPI's own, under Strider's.
template <class Irecv>
struct PostedReceive {
  Irecv irecv;
  int (*wait)(MPI_Request*, MPI_Status*);
  int (*cancel)(MPI_Request*);
};

template <class Irecv>
PostedReceive<Irecv> posted_receive(Irecv irecv) {
  return {irecv, STRIDER_NEXT(MPI_Wait), STRIDER_NEXT(MPI_Cancel)};
}

// Waits for the posted receive. A blocking receive leaves the status's MPI_ERROR field alone
// (the standard's "Return status"); MPI_Wait may set it, so it is put back.
template <class Irecv>
int wait_posted(const PostedReceive<Irecv>& posted, MPI_Request& request, MPI_Status& status) {
  const int kept = status.MPI_ERROR;
  const int rc = posted.wait(&request, &status);
  status.MPI_ERROR = kept;
  return rc;
}

// Ends a posted receive whose call failed before it waited (its send failed): cancelled unless
// a sender took its offer (the notice is then on its way), and completed, so that its ledger
// ticket and offer settle. What it received, if anything, is unpacked; the call's error stands.
template <class Irecv>
void abandon_posted(const PostedReceive<Irecv>& posted, MPI_Request& request,
                    transfer::Incoming& in) {
  if (offers::may_cancel(in)) posted.cancel(&request);
  MPI_Status status{};
  const int rc = posted.wait(&request, &status);
  transfer::complete_incoming(in, status, rc);
}

}  // namespace strider::calls
