// The one way a collective Strider may serve is run. Every rank of the communicator calls
// execute at the same collective call, whatever its buffers:
//   1. describe (the caller): the sides of `call`; `served` when Strider moves any of them here.
//   2. the same-node transport (same_node.hpp), for a blocking call on an intracommunicator
//      (`same_node` given): every rank enters it, served or not, since its vote is part of the
//      agreement; when every rank can, it moves the whole call GPU to GPU and the call is done.
//   3. else the wire transport: the call is forwarded where it is not served; otherwise
//      `prepare(call)` computes what the MPI is given (wire counts and displacements), and
//      serve (call.hpp) runs start, the MPI's collective on the wires, `issue(call, request)`,
//      and finish (for a nonblocking call, at its completion; for a persistent one, the MPI's
//      init on the wires, then start and finish at each MPI_Start and its completion).
#pragma once

#include <mpi.h>

#include <memory>

#include "collective/call.hpp"
#include "collective/form.hpp"
#include "collective/same_node.hpp"

namespace strider::collective {

// Where the wire transport needs no arguments beyond the sides' own.
inline int nothing_to_prepare(Call&) { return MPI_SUCCESS; }

template <class Forward, class Prepare, class Issue>
int execute(std::unique_ptr<Call> call, bool served, const SameNodeShape* same_node,
            const Form& form, Forward forward, Prepare prepare, Issue issue) {
  if (form.forward_only) served = false;
  if (same_node != nullptr && form.blocking()) {
    int rc = MPI_SUCCESS;
    if (same_node_collective(call->comm, *same_node, served ? call.get() : nullptr, rc)) return rc;
  }
  if (!served) return forward();
  // A persistent call's wires travel as bytes: no derived wire type reaches the MPI's request,
  // which some MPIs release at MPI_Request_free (MPICH 4.0's persistent Allgather); and they
  // are host memory, as for persistent point-to-point requests.
  if (form.is_persistent) {
    call->send.travel_as_bytes();
    call->recv.travel_as_bytes();
    call->send.keep_off_device();
    call->recv.keep_off_device();
  }
  if (const int rc = prepare(*call)) return rc;
  Call& c = *call;
  return serve(std::move(call), form, [&](const Form& f) { return issue(c, f); });
}

}  // namespace strider::collective
