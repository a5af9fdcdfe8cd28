// An operation: a transfer Strider runs under a request the application holds (the MPI's own
// request, so every completion call works on it). The progress engine (transfer/requests.hpp)
// keeps each one under its request and hands it the MPI's verdict from whichever completion
// call observes it. An operation owns what it holds (wire buffer, type duplicate): destroying
// it releases them. Point-to-point sends and receives (calls/p2p_operations.hpp) and nonblocking
// collectives (collective/call.hpp) are operations.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

namespace strider::transfer {

class Requests;

class Operation {
 public:
  virtual ~Operation() = default;

  // The MPI completed the request (and freed it) with `error`, its error for it. Finishes the
  // operation (a receive unpacks what arrived, and may correct the status's count for a
  // truncation only Strider sees); returns Strider's own error, if any.
  virtual int complete(MPI_Status& status, int error) = 0;

  // The request is seen complete but stays live (MPI_Request_get_status): does now what the
  // application must see with the flag (a receive's data in place). complete() follows later.
  virtual int observe_complete(MPI_Status& status) {
    (void)status;
    return MPI_SUCCESS;
  }

  // At MPI_Finalize, for a freed request that has not completed: whether it may be cancelled (a
  // receive that never matched would hold MPI_Finalize forever) or must be waited for (a send
  // must complete, as it would without Strider).
  virtual bool cancel_at_finalize() const { return false; }

  // MPI_Cancel on the request: whether the MPI may be asked to cancel it. A receive whose
  // same-node offer was taken says no: its notice is on the way, so it completes normally (a
  // cancel the standard allows to fail).
  virtual bool may_cancel() { return true; }

  // A send numbered for the same-node offers (offers/protocol.hpp): a cancel the MPI carries out
  // would leave a gap in its stream's numbering.
  virtual bool numbered_send() const { return false; }

  // A start of a persistent request: the MPI leaves the request live (inactive) when it
  // completes, so completion calls learn it from their flags, indices and statuses instead.
  virtual bool persistent() const { return false; }

  // A persistent request Strider made for a one-shot call (a deferred send, calls/deferred
  // sends.hpp): the completion call that sees it complete frees it, as the MPI would free the
  // nonblocking request the application asked for.
  virtual bool one_shot() const { return false; }

  // A request the MPI never started, so that it is inactive: complete at once for Wait, Test,
  // Waitall and Testall, but skipped by Waitany, Testany, Waitsome and Testsome, which report it
  // through Strider instead (calls/completion.hpp). A deferred send that its flush could not
  // start. Requests::count_unstarted tracks how many exist.
  virtual bool unstarted() const { return false; }

  // The receive whose wire this operation unpacks at completion, if it is one (arrival waves:
  // wire.hpp unpack_wave).
  virtual struct Incoming* incoming() { return nullptr; }

  // How many operations the progress engine had tracked before this one (Requests::track): an
  // MPI may hand a freed request handle to a new request at once, so this tells the operations
  // tracked under one handle apart.
  std::uint64_t tracked_as() const { return tracked_as_; }

 private:
  friend class Requests;
  std::uint64_t tracked_as_ = 0;
};

using OperationPtr = std::unique_ptr<Operation>;

}  // namespace strider::transfer
