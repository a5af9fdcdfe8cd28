// The progress engine: the operations (transfer/operation.hpp) of Strider's nonblocking calls.
// The application holds the MPI's own request (so every completion function works on it, mixed
// with any other request); Strider keeps, per request, the operation that must finish when the
// MPI reports it complete (unpack a receive's wire buffer into the user's buffer, release a
// send's). The completion functions look completed requests up here, whichever of them
// observes the completion.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/flat_index.hpp"
#include "transfer/operation.hpp"

namespace strider::transfer {

class Requests {
 public:
  // Returns the operation's Operation::tracked_as.
  std::uint64_t track(MPI_Request request, OperationPtr op);
  // Whether any request is tracked: completion calls on other requests then cost one load.
  bool empty() const { return size_.load(std::memory_order_acquire) == 0; }
  // Takes the operation tracked under `request`, if any: the newest one tracked before `before`
  // (a count of tracked_so_far). Completion calls claim operations either before calling the MPI
  // (their handles are live: the newest is theirs) or, those that complete some of their
  // requests below MPI_THREAD_MULTIPLE (calls/completion.hpp), after it reported one complete.
  // By then the MPI has freed that handle and may have handed it to a new operation, tracked
  // under it too, so such a call claims the newest one tracked before it began. Those whose
  // requests did not complete are put back.
  OperationPtr take(MPI_Request request, std::uint64_t before = UINT64_MAX);
  void put_back(MPI_Request request, OperationPtr op);
  // How many operations have been tracked so far.
  std::uint64_t tracked_so_far() const { return tracked_.load(std::memory_order_acquire); }
  // For a completion call's array, under one lock: `out[i]` gets request i's operation
  // (`out` sized to `n` when any is tracked; false and untouched when none is).
  bool take_all(int n, const MPI_Request* requests, std::vector<OperationPtr>& out);
  void put_back_all(const std::vector<MPI_Request>& requests, std::vector<OperationPtr>& ops);
  std::size_t size() const { return size_.load(std::memory_order_relaxed); }
  // Below MPI_THREAD_MULTIPLE only this thread calls the MPI (besides Strider's progress thread,
  // which never completes the application's requests). Set at MPI_Init.
  void set_single_caller(bool single) { single_caller_.store(single, std::memory_order_relaxed); }
  bool single_caller() const { return single_caller_.load(std::memory_order_relaxed); }

  // MPI_Request_free on a tracked request: the operation continues; Strider completes it when it
  // sees it done (polled as its calls start and return; at MPI_Finalize waited for, or cancelled
  // if it is a receive that never matched).
  void orphan(MPI_Request request, OperationPtr op);

  // MPI_Cancel: whether the request is tracked, and if so whether its operation lets the MPI
  // cancel it (Operation::may_cancel), and whether it is a numbered send
  // (Operation::numbered_send: ForwardSend).
  enum class CancelVerdict { Untracked, Forward, ForwardSend, Refuse };
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
  OperationPtr take_locked(MPI_Request request, std::uint64_t before);  // mutex_ held

  // The operations tracked under one handle, in the order they were tracked. More than one only
  // while a completion call has yet to claim the operation of a handle the MPI freed and handed
  // out again; one is kept without a container's allocation (a deque took two per message).
  struct Tracked {
    OperationPtr first;
    std::vector<OperationPtr> more;
    void insert(OperationPtr op);  // by Operation::tracked_as
    OperationPtr take(std::uint64_t before);
    Operation* newest() { return more.empty() ? first.get() : more.back().get(); }
    bool empty() const { return !first; }
  };

  // The handles tracked, as nodes of a flat table (runtime/flat_index.hpp) keyed by handle: a
  // burst tracks and releases hundreds of requests per exchange, and a node-based hash map's
  // allocations made a third of a forwarded receive's cost. All under mutex_.
  struct Node {
    std::uint64_t key = 0;  // the handle's (key())
    Tracked tracked;
  };
  static std::uint64_t key(MPI_Request request);
  Tracked* find_locked(MPI_Request request);
  Tracked& find_or_add_locked(MPI_Request request);

  mutable std::mutex mutex_;
  runtime::FlatTable<Node> table_;
  std::atomic<std::size_t> size_{0};
  std::atomic<std::uint64_t> tracked_{0};
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
