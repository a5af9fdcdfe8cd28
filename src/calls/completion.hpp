// Completion: the MPI completes the requests (they are its own); Strider then finishes the
// operations it tracks under those that completed: unpacking receives, releasing wire buffers.
// The operations are claimed before the MPI is called, since a handle the MPI frees may at once
// be handed to another thread's new operation, and those whose requests did not complete are
// put back. The entry points (interpose/p2p_completion_calls.cpp) wrap the MPI's calls in these.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "transfer/requests.hpp"
#include "transfer/wire.hpp"

namespace strider::calls {

// The statuses to hand the MPI: the caller's, or scratch ones when it ignores them (Strider
// needs them to know how much a receive got).
struct Statuses {
  std::vector<MPI_Status> scratch;
  MPI_Status* use;
  Statuses(MPI_Status* caller, int n)
      : scratch(caller == MPI_STATUSES_IGNORE ? static_cast<std::size_t>(n) : 0),
        use(caller == MPI_STATUSES_IGNORE ? scratch.data() : caller) {}
};

struct Status {
  MPI_Status scratch;
  MPI_Status* use;
  explicit Status(MPI_Status* caller) : use(caller == MPI_STATUS_IGNORE ? &scratch : caller) {}
};

// The operations tracked under an array of requests, claimed for one completion call: all of
// them before the MPI is called, or, for a call that completes some of them (`some`: Waitany,
// Testany, Waitsome, Testsome) where only this thread calls the MPI
// (Requests::single_caller), each when its request is seen complete, so that a loop of such
// calls over n requests costs O(1) lookups per call instead of O(n). Such a claim takes the
// newest operation tracked under the handle before the call began (Requests::take). Not under
// MPI_THREAD_MULTIPLE: there a handle the MPI freed during the call may go at once to another
// thread's request that Strider does not track, whose completion call would then claim this
// call's operation as its own (the newest under the handle).
class Claimed {
 public:
  // `r`: the call's requests, where a one-shot request is freed once finished
  // (Operation::one_shot).
  Claimed(int n, MPI_Request* r, bool some = false);
  bool any() const { return lazy_ ? !transfer::requests().empty() : !ops_.empty(); }
  bool has(int i);
  // Whether request i is tracked and the MPI never started it (Operation::unstarted).
  bool unstarted(int i) { return has(i) && op(i)->unstarted(); }
  // Whether request i, tracked, has finished, the call reporting it complete or not
  // (`reported`): the MPI freed it, or it is a persistent request's start (which the MPI leaves
  // live, inactive).
  bool finished(int i, const MPI_Request* handles, bool reported) {
    return has(i) && (handles[i] == MPI_REQUEST_NULL || (reported && op(i)->persistent()));
  }

  // Request i completed (the MPI freed it, or left a persistent one inactive): runs its
  // operation's completion, and frees a one-shot request.
  int finish(int i, MPI_Status& status, int error);

  // Request i is complete but stays live (MPI_Request_get_status): a receive is unpacked now,
  // so the data is in place when the application sees the flag.
  int observe_complete(int i, MPI_Status& status);

  // The receives among the requests that completed (`done`: request index and its status)
  // unpacked as one arrival wave where they can be (transfer/wire.hpp unpack_wave), with the
  // receives of later calls that have arrived too (early_arrivals.hpp); `mpi_rc` is what the MPI
  // returned.
  void unpack_wave(const std::vector<std::pair<int, MPI_Status*>>& done, int mpi_rc);

  // Puts back what did not complete (the request is still live).
  ~Claimed();
  Claimed(const Claimed&) = delete;
  Claimed& operator=(const Claimed&) = delete;

 private:
  // Request i's operation (null where it is not Strider's).
  transfer::OperationPtr& op(int i);
  // Lazy: request i's entry in looked_, looked up on first use.
  transfer::OperationPtr& looked_up(int i);

  std::vector<transfer::OperationPtr> ops_;  // not lazy: by request
  MPI_Request* live_ = nullptr;              // the call's requests
  std::vector<MPI_Request> handles_;         // as they were before the MPI's call
  // Lazy: the requests looked up so far, with their operations (null: not Strider's). A call
  // looks up the few the MPI reported, so nothing here is as long as the array (a Waitany loop
  // over a burst makes one call per request).
  std::vector<std::pair<int, transfer::OperationPtr>> looked_;
  // Past kScannedEntries of them, each request's entry in looked_ (-1: none yet).
  static constexpr std::size_t kScannedEntries = 8;
  std::vector<int> entry_of_;
  bool lazy_ = false;
  std::uint64_t before_ = 0;   // lazy: Requests::tracked_so_far when the call began
  int receives_finished_ = 0;  // for Requests::note_receives_finished
};

// For one request (Wait, Test, -any): its completion, or the MPI's error.
int finish_one(Claimed& claimed, int i, MPI_Status& status, int rc);

// For the -all and -some forms: finishes request i (status `s`) and folds an unpack error into
// the statuses. `mpi_rc` is what the MPI returned; `rc` what the call will return.
void finish_in_array(Claimed& claimed, int i, MPI_Status& s, int mpi_rc, int& rc,
                     MPI_Status* others, int n_others);

// Where the caller ignores statuses, an error found only in them is returned directly.
int error_of(int rc, const Statuses& st, int n);

// Requests the MPI never started (Operation::unstarted: a deferred send its flush could not
// start) are inactive, so Waitany, Testany, Waitsome and Testsome would skip them and never
// report their completion or error. Where any exist (Requests::has_unstarted; one load
// otherwise), these report them first, as complete, without calling the MPI: the first of them
// (`index`, `status`; `rc` its error, as MPI_Wait returns it), or every one of them (`outcount`,
// `indices`, statuses in `st`; `rc` MPI_ERR_IN_STATUS where one failed). False when there is none
// among `requests`.
bool report_unstarted_any(Claimed& claimed, int count, const MPI_Request* requests, int* index,
                          MPI_Status& status, int& rc);
bool report_unstarted_some(Claimed& claimed, int incount, const MPI_Request* requests,
                           int* outcount, int indices[], Statuses& st, int& rc);

// Waitall and Testall: `call(statuses)` runs the MPI's; `done` says whether it completed all.
template <class Call>
int all(int count, MPI_Request requests_[], MPI_Status statuses[], Call call) {
  Claimed claimed(count, requests_);
  Statuses st(statuses, count);
  bool done = true;
  const int mpi_rc = call(st.use, done);
  if (!done) return mpi_rc;
  int rc = mpi_rc;
  // MPI_ERR_PENDING ones did not complete: they stay live and tracked.
  std::vector<std::pair<int, MPI_Status*>> finished;
  for (int i = 0; i < count; ++i) {
    const bool reported = mpi_rc != MPI_ERR_IN_STATUS || st.use[i].MPI_ERROR != MPI_ERR_PENDING;
    if (claimed.finished(i, requests_, reported)) finished.emplace_back(i, &st.use[i]);
  }
  claimed.unpack_wave(finished, mpi_rc);
  for (const auto& [i, status] : finished) {
    finish_in_array(claimed, i, *status, mpi_rc, rc, st.use, count);
  }
  return error_of(rc, st, count);
}

// Waitsome and Testsome.
template <class Call>
int some(int incount, MPI_Request requests_[], int* outcount, int indices[], MPI_Status statuses[],
         Call call) {
  Claimed claimed(incount, requests_, true);
  Statuses st(statuses, incount);
  if (int rc = MPI_SUCCESS;
      report_unstarted_some(claimed, incount, requests_, outcount, indices, st, rc)) {
    return rc;
  }
  const int mpi_rc = call(st.use);
  if (*outcount == MPI_UNDEFINED || *outcount <= 0) return mpi_rc;
  int rc = mpi_rc;
  std::vector<std::pair<int, MPI_Status*>> done;
  for (int k = 0; k < *outcount; ++k) {
    const int i = indices[k];
    if (claimed.finished(i, requests_, true)) done.emplace_back(i, &st.use[k]);
  }
  claimed.unpack_wave(done, mpi_rc);
  for (const auto& [i, status] : done) {
    finish_in_array(claimed, i, *status, mpi_rc, rc, st.use, *outcount);
  }
  return error_of(rc, st, *outcount);
}

}  // namespace strider::calls
