// Completion: MPI_Wait/Test and their -all/-any/-some forms, MPI_Request_get_status,
// MPI_Request_free. The MPI completes the requests; calls/completion.hpp finishes the
// operations Strider tracks under them. With nothing tracked the calls cost an atomic load or
// two more than the MPI's.
#include <mpi.h>

#include "calls/completion.hpp"
#include "calls/deferred_sends.hpp"
#include "calls/persistent_requests.hpp"
#include "interpose/export.hpp"
#include "offers/protocol.hpp"
#include "runtime/profile.hpp"
#include "transfer/next.hpp"

using namespace strider::transfer;
namespace runtime = strider::runtime;

namespace {

// The MPI's completion call, timed under STRIDER_PROFILE.
template <class Next>
auto timed_mpi(Next next) {
  return [next](auto... args) {
    const runtime::Timed timed(runtime::Phase::MpiCompletion);
    return next(args...);
  };
}

}  // namespace

STRIDER_EXPORT int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  const strider::calls::EntryCall entry;
  const runtime::Timed timed(runtime::Phase::Completion);
  const auto next = timed_mpi(STRIDER_NEXT(MPI_Wait));
  ProgressOrphans progress;
  if (request == nullptr) return next(request, status);
  strider::calls::Claimed claimed(1, request);
  if (!claimed.any()) return next(request, status);
  strider::calls::Status st(status);
  const int rc = next(request, st.use);
  if (!claimed.finished(0, request, true)) return rc;  // not completed (an error left it live)
  return strider::calls::finish_one(claimed, 0, *st.use, rc);
}

STRIDER_EXPORT int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  const strider::calls::EntryCall entry;
  const runtime::Timed timed(runtime::Phase::Completion);
  const auto next = timed_mpi(STRIDER_NEXT(MPI_Test));
  ProgressOrphans progress;
  if (request == nullptr) return next(request, flag, status);
  strider::calls::Claimed claimed(1, request);
  if (!claimed.any()) return next(request, flag, status);
  strider::calls::Status st(status);
  const int rc = next(request, flag, st.use);
  if (!claimed.finished(0, request, *flag)) return rc;  // not complete, or an error left it live
  return strider::calls::finish_one(claimed, 0, *st.use, rc);
}

STRIDER_EXPORT int MPI_Waitall(int count, MPI_Request requests_[], MPI_Status statuses[]) {
  const strider::calls::EntryCall entry;
  const runtime::Timed timed(runtime::Phase::Completion);
  const auto next = timed_mpi(STRIDER_NEXT(MPI_Waitall));
  ProgressOrphans progress;
  if (count <= 0 || requests().empty()) return next(count, requests_, statuses);
  return strider::calls::all(count, requests_, statuses, [&](MPI_Status* s, bool& done) {
    done = true;
    return next(count, requests_, s);
  });
}

STRIDER_EXPORT int MPI_Testall(int count, MPI_Request requests_[], int* flag,
                               MPI_Status statuses[]) {
  const strider::calls::EntryCall entry;
  const runtime::Timed timed(runtime::Phase::Completion);
  const auto next = timed_mpi(STRIDER_NEXT(MPI_Testall));
  ProgressOrphans progress;
  if (count <= 0 || requests().empty()) return next(count, requests_, flag, statuses);
  return strider::calls::all(count, requests_, statuses, [&](MPI_Status* s, bool& done) {
    const int rc = next(count, requests_, flag, s);
    // Without all complete nothing was freed, unless an error reported per request.
    done = *flag || rc == MPI_ERR_IN_STATUS;
    return rc;
  });
}

STRIDER_EXPORT int MPI_Waitany(int count, MPI_Request requests_[], int* index, MPI_Status* status) {
  const strider::calls::EntryCall entry;
  const runtime::Timed timed(runtime::Phase::Completion);
  const auto next = timed_mpi(STRIDER_NEXT(MPI_Waitany));
  ProgressOrphans progress;
  if (count <= 0 || requests().empty()) return next(count, requests_, index, status);
  strider::calls::Claimed claimed(count, requests_, true);
  if (!claimed.any()) return next(count, requests_, index, status);
  strider::calls::Status st(status);
  if (int rc = MPI_SUCCESS;
      strider::calls::report_unstarted_any(claimed, count, requests_, index, *st.use, rc)) {
    return rc;
  }
  const int rc = next(count, requests_, index, st.use);
  const int i = *index;
  if (i == MPI_UNDEFINED || i < 0 || i >= count || !claimed.finished(i, requests_, true)) {
    return rc;
  }
  return strider::calls::finish_one(claimed, i, *st.use, rc);
}

STRIDER_EXPORT int MPI_Testany(int count, MPI_Request requests_[], int* index, int* flag,
                               MPI_Status* status) {
  const strider::calls::EntryCall entry;
  const runtime::Timed timed(runtime::Phase::Completion);
  const auto next = timed_mpi(STRIDER_NEXT(MPI_Testany));
  ProgressOrphans progress;
  if (count <= 0 || requests().empty()) return next(count, requests_, index, flag, status);
  strider::calls::Claimed claimed(count, requests_, true);
  if (!claimed.any()) return next(count, requests_, index, flag, status);
  strider::calls::Status st(status);
  if (int rc = MPI_SUCCESS;
      strider::calls::report_unstarted_any(claimed, count, requests_, index, *st.use, rc)) {
    *flag = 1;
    return rc;
  }
  const int rc = next(count, requests_, index, flag, st.use);
  const int i = *index;
  if (!*flag || i == MPI_UNDEFINED || i < 0 || i >= count ||
      !claimed.finished(i, requests_, true)) {
    return rc;
  }
  return strider::calls::finish_one(claimed, i, *st.use, rc);
}

STRIDER_EXPORT int MPI_Waitsome(int incount, MPI_Request requests_[], int* outcount, int indices[],
                                MPI_Status statuses[]) {
  const strider::calls::EntryCall entry;
  const runtime::Timed timed(runtime::Phase::Completion);
  const auto next = timed_mpi(STRIDER_NEXT(MPI_Waitsome));
  ProgressOrphans progress;
  if (incount <= 0 || requests().empty()) {
    return next(incount, requests_, outcount, indices, statuses);
  }
  return strider::calls::some(incount, requests_, outcount, indices, statuses, [&](MPI_Status* s) {
    return next(incount, requests_, outcount, indices, s);
  });
}

STRIDER_EXPORT int MPI_Testsome(int incount, MPI_Request requests_[], int* outcount, int indices[],
                                MPI_Status statuses[]) {
  const strider::calls::EntryCall entry;
  const runtime::Timed timed(runtime::Phase::Completion);
  const auto next = timed_mpi(STRIDER_NEXT(MPI_Testsome));
  ProgressOrphans progress;
  if (incount <= 0 || requests().empty()) {
    return next(incount, requests_, outcount, indices, statuses);
  }
  return strider::calls::some(incount, requests_, outcount, indices, statuses, [&](MPI_Status* s) {
    return next(incount, requests_, outcount, indices, s);
  });
}

STRIDER_EXPORT int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  const strider::calls::EntryCall entry;
  const auto next = STRIDER_NEXT(MPI_Request_get_status);
  if (request == MPI_REQUEST_NULL || requests().empty()) return next(request, flag, status);
  strider::calls::Claimed claimed(1, &request);
  if (!claimed.any()) return next(request, flag, status);
  strider::calls::Status st(status);
  const int rc = next(request, flag, st.use);
  if (rc != MPI_SUCCESS || !*flag) return rc;
  return claimed.observe_complete(0, *st.use);
}

// A freed request's operation goes on: Strider keeps the request and completes the operation
// when it sees it done (the application can no longer ask). A served persistent request's wire
// is dropped with it (calls/persistent_p2p.hpp).
STRIDER_EXPORT int MPI_Request_free(MPI_Request* request) {
  const strider::calls::EntryCall entry;
  const auto next = STRIDER_NEXT(MPI_Request_free);
  if (request == nullptr || *request == MPI_REQUEST_NULL) return next(request);
  if (int rc = MPI_SUCCESS; strider::calls::free_persistent(request, rc)) return rc;
  if (requests().empty()) return next(request);
  auto op = requests().take(*request);
  if (!op) return next(request);
  requests().orphan(*request, std::move(op));
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

// A receive whose same-node offer was taken is not cancelled (it completes normally, as a cancel
// may); a send Strider numbered, or a request it does not track (which may be a send), may leave
// a gap in the numbering the offers rely on if the MPI cancels it (offers/protocol.hpp).
STRIDER_EXPORT int MPI_Cancel(MPI_Request* request) {
  const strider::calls::EntryCall entry;
  const auto next = STRIDER_NEXT(MPI_Cancel);
  if (request == nullptr || *request == MPI_REQUEST_NULL) return next(request);
  switch (requests().cancel_verdict(*request)) {
    case Requests::CancelVerdict::Refuse:
      return MPI_SUCCESS;
    case Requests::CancelVerdict::Untracked:
    case Requests::CancelVerdict::ForwardSend:
      strider::offers::send_may_be_cancelled();
      break;
    case Requests::CancelVerdict::Forward:
      break;
  }
  return next(request);
}
