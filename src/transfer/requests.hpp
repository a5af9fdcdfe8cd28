// The progress engine: the operations (transfer/operation.hpp) of Strider's nonblocking calls.
// The application holds the MPI's own request (so every completion function works on it, mixed
// with any other request); Strider keeps, per request, the operation that must finish when the
// MPI reports it complete (unpack a receive's wire buffer into the user's buffer, release a
// send's). The completion functions look completed requests up here, whichever of them
// observes the completion.
#pragma once

#include <mpi.h>

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "transfer/operation.hpp"

namespace strider::transfer {

class Requests {
 public:
  void track(MPI_Request request, OperationPtr op);
  // Whether any request is tracked: completion calls on other requests then cost one load.
  bool empty() const { return size_.load(std::memory_order_acquire) == 0; }
  // Takes the operation tracked under `request`, if any. Completion calls take their requests'
  // operations before calling the MPI (once the MPI frees a handle, another thread may get it
  // for a new operation) and put back those whose requests did not complete.
  OperationPtr take(MPI_Request request);  // nullptr when none
  void put_back(MPI_Request request, OperationPtr op);
  // The same for a completion call's array, under one lock: `out[i]` gets request i's operation
  // (`out` sized to `n` when any is tracked; false and untouched when none is).
  bool take_all(int n, const MPI_Request* requests, std::vector<OperationPtr>& out);
  void put_back_all(const std::vector<MPI_Request>& requests, std::vector<OperationPtr>& ops);
  std::size_t size() const { return size_.load(std::memory_order_relaxed); }
  // Below MPI_THREAD_MULTIPLE no other thread gets a handle the MPI frees during a completion
  // call, so the call may claim an operation after the MPI reports its request complete
  // (calls/completion.hpp) instead of claiming all of them before. Set at MPI_Init.
  void set_single_caller(bool single) { single_caller_.store(single, std::memory_order_relaxed); }
  bool single_caller() const { return single_caller_.load(std::memory_order_relaxed); }

  // MPI_Request_free on a tracked request: the operation continues; Strider completes it when it
  // sees it done (polled as its calls start and return; at MPI_Finalize waited for, or cancelled
  // if it is a receive that never matched).
  void orphan(MPI_Request request, OperationPtr op);

  // MPI_Cancel: whether the request is tracked, and if so whether its operation lets the MPI
  // cancel it (Operation::may_cancel).
  enum class CancelVerdict { Untracked, Forward, Refuse };
  CancelVerdict cancel_verdict(MPI_Request request);
  void progress_orphans();
  void drain_orphans();
  bool has_orphans() const { return orphans_size_.load(std::memory_order_acquire) != 0; }

  // Operations whose requests the MPI never started (Operation::unstarted): +1 when one becomes
  // so, -1 when it is finished. Waitany, Testany, Waitsome and Testsome look for them only while
  // some exist (one load otherwise).
  void count_unstarted(int delta) { unstarted_.fetch_add(delta, std::memory_order_acq_rel); }
  bool has_unstarted() const { return unstarted_.load(std::memory_order_acquire) > 0; }

  // How many of Strider's receives the last call that finished any finished: many where the
  // application completes its receives together (Waitall: their unpacks share one kernel), one
  // in a loop of Wait or Waitany and for a blocking receive. The same-node offers cost a receive
  // as one of a burst by it (offers/protocol.cpp).
  void note_receives_finished(int n) { receives_finished_.store(n, std::memory_order_relaxed); }
  int receives_finished_together() const {
    return receives_finished_.load(std::memory_order_relaxed);
  }

 private:
  OperationPtr take_locked(MPI_Request request);  // mutex_ held

  // The operations tracked under one handle, oldest first. A list only to lose nothing should an
  // MPI hand out a live handle twice; with operations claimed before the MPI can free their
  // handles it holds one, kept without a container's allocation (a deque took two per message).
  struct Tracked {
    OperationPtr first;
    std::vector<OperationPtr> more;
    void push_back(OperationPtr op);
    void push_front(OperationPtr op);
    OperationPtr pop_front();
    bool empty() const { return !first; }
  };

  mutable std::mutex mutex_;
  std::unordered_map<MPI_Request, Tracked> ops_;
  std::atomic<std::size_t> size_{0};
  std::mutex orphans_mutex_;
  std::vector<std::pair<MPI_Request, OperationPtr>> orphans_;
  std::atomic<std::size_t> orphans_size_{0};
  std::atomic<int> unstarted_{0};
  std::atomic<int> receives_finished_{0};
  std::atomic<bool> single_caller_{false};
};

Requests& requests();

// Polls the operations of freed requests when an entry point starts and when it returns, so a
// receive freed with MPI_Request_free is unpacked as soon as Strider runs after it completed.
struct ProgressOrphans {
  ProgressOrphans() { requests().progress_orphans(); }
  ~ProgressOrphans() { requests().progress_orphans(); }
  ProgressOrphans(const ProgressOrphans&) = delete;
  ProgressOrphans& operator=(const ProgressOrphans&) = delete;
};

}  // namespace strider::transfer
