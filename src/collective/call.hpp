// A collective Strider serves: its two sides, the arguments the MPI gets in their place (kept
// until a nonblocking call completes), and what runs before and after the MPI's collective.
//   start:  each converted side takes its wire buffer; the send side is packed (one kernel
//           for all its pieces); a rank's own piece is copied straight across.
//   the MPI's collective on the wires (packed elements of the wire type, wire_types.hpp);
//   finish: the receive side is unpacked (one kernel), host mirrors are copied back.
// Blocking calls run the three in a row; nonblocking ones leave finish to the operation
// tracked under the MPI's request (transfer/requests.hpp), whichever completion call sees it.
// Persistent ones take their wires once, at the MPI's init on them; each MPI_Start then loads
// (load) and each completion finishes.
#pragma once

#include <mpi.h>

#include <memory>
#include <span>
#include <vector>

#include "collective/form.hpp"
#include "collective/mirror.hpp"
#include "collective/side.hpp"
#include "transfer/operation.hpp"
#include "transfer/requests.hpp"
#include "transfer/state.hpp"

namespace strider::collective {

// The group a collective's pieces address: the communicator's, or the remote group of an
// intercommunicator.
struct Group {
  int size = 0;  // peers
  int rank = 0;  // this rank in its own group
  bool inter = false;
};
// False for MPI_COMM_NULL (`rejected` MPI_SUCCESS: the caller forwards, the MPI reports it) or a
// handle the MPI rejects (`rejected` the MPI's error: it has called the error handler, so the
// caller returns that error rather than forward the call, which would call it again).
bool group_of(MPI_Comm comm, Group& out, int& rejected);

// The wire arguments of one side: a buffer, and per piece a count, a displacement (in wire
// elements, or bytes for the -w forms) and a type.
struct WireArgs {
  void* buffer = nullptr;
  std::vector<int> counts;
  std::vector<int> displacements;
  std::vector<MPI_Aint> byte_displacements;
  std::vector<MPI_Datatype> types;
};

struct Call {
  explicit Call(MPI_Comm c) : comm(c) {}
  MPI_Comm comm;
  Side send, recv;
  // A rank's own piece, copied from send piece to receive piece directly (-1: none).
  int self_send = -1, self_recv = -1;
  WireArgs send_args, recv_args;
  std::vector<Mirror> mirrors;  // reductions: host copies the MPI computes on
  bool nonblocking = false;     // finished at a completion call, after the application returned
  std::shared_ptr<const void> narrowed;  // Form::narrowed, while the MPI may read it
};

// Describes both sides of a call from their piece specs; false to forward (a side Strider cannot
// read, or neither side converted). With `sbuf` MPI_IN_PLACE there is no send side: the receive
// pieces are packed into the receive wire first and the MPI gets MPI_IN_PLACE.
bool describe_sides(Call& call, const void* sbuf, const void* rbuf,
                    std::span<const PieceSpec> send_specs, std::span<const PieceSpec> recv_specs);

// Fills a converted side's wire arguments (counts and displacements in wire elements; byte
// displacements too when `bytes`). MPI_ERR_COUNT through the handler when a displacement does
// not fit an int.
int wire_args(Call& call, Side& side, bool bytes, WireArgs& out);

// Marks the own piece for a direct copy when both sides are converted. `send_too`: the send
// piece goes to no one else either (alltoall); an allgather still sends it to the others.
void copy_own_piece(Call& call, int send_piece, int recv_piece, bool send_too = true);

// start = acquire (each converted side takes its wire) + load (the send side packed, in-place
// pieces preloaded, the own piece copied, mirrors loaded).
int acquire(Call& call);
int load(Call& call);
int start(Call& call);
int finish(Call& call);

// A served collective's completion, tracked under the MPI's request: the receive side finished
// once, by whichever completion call sees it. A persistent call's Call is shared with its
// request's entry (calls/persistent_requests.hpp), and one operation is tracked per start.
class CollectiveOperation final : public transfer::Operation {
 public:
  explicit CollectiveOperation(std::shared_ptr<Call> call, bool persistent = false)
      : call_(std::move(call)), persistent_(persistent) {}
  int complete(MPI_Status& status, int error) override;
  int observe_complete(MPI_Status& status) override;
  bool persistent() const override { return persistent_; }

 private:
  std::shared_ptr<Call> call_;
  bool persistent_ = false;
  bool finished_ = false;
  int finish_rc_ = MPI_SUCCESS;
};

// A persistent call's MPI init on its wires: the call is kept in `*form.kept` for its starts.
template <class Issue>
int serve_persistent(std::unique_ptr<Call> call, const Form& form, Issue issue) {
  call->nonblocking = true;
  if (const int rc = acquire(*call)) return rc;
  // Each start packs (and each completion unpacks) after the application may have freed types.
  for (Side* side : {&call->send, &call->recv}) {
    if (!side->converted()) continue;
    if (const int rc = side->hold_types()) return rc;
  }
  const int rc = issue(form);
  if (rc != MPI_SUCCESS) return rc;
  *form.kept = std::move(call);
  return MPI_SUCCESS;
}

// Runs `call` around `issue(form)`, the MPI's collective on the wires: blocking, tracked under
// the request the MPI returns (nonblocking), or kept for its starts (persistent).
template <class Issue>
int serve(std::unique_ptr<Call> call, const Form& form, Issue issue) {
  transfer::counters().collectives_served++;
  call->narrowed = form.narrowed;
  if (form.is_persistent) return serve_persistent(std::move(call), form, issue);
  MPI_Request* request = form.request;
  call->nonblocking = request != nullptr;
  if (const int rc = start(*call)) return rc;
  if (request == nullptr) {
    const int rc = issue(form);
    if (rc != MPI_SUCCESS) return rc;
    return finish(*call);
  }
  if (const int rc = call->recv.hold_types()) return rc;
  const int rc = issue(form);
  if (rc != MPI_SUCCESS) return rc;
  transfer::requests().track(*request, std::make_unique<CollectiveOperation>(std::move(call)));
  return MPI_SUCCESS;
}

}  // namespace strider::collective
