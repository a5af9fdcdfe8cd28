// Completion: MPI_Wait/Test and their -all/-any/-some forms, MPI_Request_free. The MPI completes
// the requests (they are its own); Strider then finishes the operations it tracks under those
// that completed: unpacking receives, releasing wire buffers. With nothing tracked the calls
// cost one atomic load more than the MPI's.
#include <mpi.h>

#include <vector>

#include "interpose/next.hpp"
#include "interpose/requests.hpp"

namespace strider::interpose {
namespace {

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

bool any_tracked(int n, const MPI_Request* r) {
  if (requests().empty()) return false;
  for (int i = 0; i < n; ++i) {
    if (requests().tracked(r[i])) return true;
  }
  return false;
}

// Finishes the operation tracked under `request` (if any), which the MPI reported complete.
// An unpack error goes to `status` (where statuses are kept) and is returned.
int finish(MPI_Request request, MPI_Status& status, bool succeeded) {
  auto op = requests().take(request);
  if (!op) return MPI_SUCCESS;
  return complete(*op, status, succeeded);
}

// For the -all and -some forms: finishes request i, folding an unpack error into the statuses.
void finish_in_array(MPI_Request request, MPI_Status& status, bool array_ok, int& rc) {
  const bool succeeded = array_ok || status.MPI_ERROR == MPI_SUCCESS;
  if (const int e = finish(request, status, succeeded); e != MPI_SUCCESS) {
    status.MPI_ERROR = e;
    rc = MPI_ERR_IN_STATUS;
  }
}

}  // namespace
}  // namespace strider::interpose

using namespace strider::interpose;

STRIDER_EXPORT int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  const auto next = STRIDER_NEXT(MPI_Wait);
  requests().progress_orphans();
  if (request == nullptr || !requests().tracked(*request)) return next(request, status);
  const MPI_Request r = *request;
  Status st(status);
  const int rc = next(request, st.use);
  const int e = finish(r, *st.use, rc == MPI_SUCCESS);
  return rc != MPI_SUCCESS ? rc : e;
}

STRIDER_EXPORT int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  const auto next = STRIDER_NEXT(MPI_Test);
  requests().progress_orphans();
  if (request == nullptr || !requests().tracked(*request)) return next(request, flag, status);
  const MPI_Request r = *request;
  Status st(status);
  const int rc = next(request, flag, st.use);
  if (!*flag) return rc;
  const int e = finish(r, *st.use, rc == MPI_SUCCESS);
  return rc != MPI_SUCCESS ? rc : e;
}

STRIDER_EXPORT int MPI_Waitall(int count, MPI_Request requests_[], MPI_Status statuses[]) {
  const auto next = STRIDER_NEXT(MPI_Waitall);
  requests().progress_orphans();
  if (count <= 0 || !any_tracked(count, requests_)) return next(count, requests_, statuses);
  const std::vector<MPI_Request> before(requests_, requests_ + count);
  Statuses st(statuses, count);
  int rc = next(count, requests_, st.use);
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
    // No per-request report: complete what the MPI freed (with the error), leave the rest.
    for (int i = 0; i < count; ++i) {
      if (requests_[i] == MPI_REQUEST_NULL) finish(before[i], st.use[i], false);
    }
    return rc;
  }
  for (int i = 0; i < count; ++i) {
    // MPI_ERR_PENDING: neither failed nor completed; the request stays live and tracked.
    if (rc == MPI_ERR_IN_STATUS && st.use[i].MPI_ERROR == MPI_ERR_PENDING) continue;
    finish_in_array(before[i], st.use[i], rc == MPI_SUCCESS, rc);
  }
  // Errors are reported in statuses only where the caller keeps them.
  if (rc == MPI_ERR_IN_STATUS && statuses == MPI_STATUSES_IGNORE) {
    for (const MPI_Status& s : st.scratch) {
      if (s.MPI_ERROR != MPI_SUCCESS && s.MPI_ERROR != MPI_ERR_PENDING) return s.MPI_ERROR;
    }
  }
  return rc;
}

STRIDER_EXPORT int MPI_Testall(int count, MPI_Request requests_[], int* flag,
                               MPI_Status statuses[]) {
  const auto next = STRIDER_NEXT(MPI_Testall);
  requests().progress_orphans();
  if (count <= 0 || !any_tracked(count, requests_)) return next(count, requests_, flag, statuses);
  const std::vector<MPI_Request> before(requests_, requests_ + count);
  Statuses st(statuses, count);
  int rc = next(count, requests_, flag, st.use);
  if (rc == MPI_SUCCESS && !*flag) return rc;
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
    for (int i = 0; i < count; ++i) {
      if (requests_[i] == MPI_REQUEST_NULL) finish(before[i], st.use[i], false);
    }
    return rc;
  }
  for (int i = 0; i < count; ++i) {
    if (rc == MPI_ERR_IN_STATUS && st.use[i].MPI_ERROR == MPI_ERR_PENDING) continue;
    finish_in_array(before[i], st.use[i], rc == MPI_SUCCESS, rc);
  }
  if (rc == MPI_ERR_IN_STATUS && statuses == MPI_STATUSES_IGNORE) {
    for (const MPI_Status& s : st.scratch) {
      if (s.MPI_ERROR != MPI_SUCCESS && s.MPI_ERROR != MPI_ERR_PENDING) return s.MPI_ERROR;
    }
  }
  return rc;
}

STRIDER_EXPORT int MPI_Waitany(int count, MPI_Request requests_[], int* index, MPI_Status* status) {
  const auto next = STRIDER_NEXT(MPI_Waitany);
  requests().progress_orphans();
  if (count <= 0 || !any_tracked(count, requests_)) return next(count, requests_, index, status);
  const std::vector<MPI_Request> before(requests_, requests_ + count);
  Status st(status);
  const int rc = next(count, requests_, index, st.use);
  if (*index == MPI_UNDEFINED) return rc;
  const int e = finish(before[*index], *st.use, rc == MPI_SUCCESS);
  return rc != MPI_SUCCESS ? rc : e;
}

STRIDER_EXPORT int MPI_Testany(int count, MPI_Request requests_[], int* index, int* flag,
                               MPI_Status* status) {
  const auto next = STRIDER_NEXT(MPI_Testany);
  requests().progress_orphans();
  if (count <= 0 || !any_tracked(count, requests_)) {
    return next(count, requests_, index, flag, status);
  }
  const std::vector<MPI_Request> before(requests_, requests_ + count);
  Status st(status);
  const int rc = next(count, requests_, index, flag, st.use);
  if (!*flag || *index == MPI_UNDEFINED) return rc;
  const int e = finish(before[*index], *st.use, rc == MPI_SUCCESS);
  return rc != MPI_SUCCESS ? rc : e;
}

namespace {

template <class Some>
int some(int incount, MPI_Request requests_[], int* outcount, int indices[], MPI_Status statuses[],
         Some call) {
  const std::vector<MPI_Request> before(requests_, requests_ + incount);
  Statuses st(statuses, incount);
  int rc = call(st.use);
  if (*outcount == MPI_UNDEFINED || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)) return rc;
  for (int k = 0; k < *outcount; ++k) {
    finish_in_array(before[indices[k]], st.use[k], rc == MPI_SUCCESS, rc);
  }
  if (rc == MPI_ERR_IN_STATUS && statuses == MPI_STATUSES_IGNORE) {
    for (int k = 0; k < *outcount; ++k) {
      if (st.scratch[k].MPI_ERROR != MPI_SUCCESS) return st.scratch[k].MPI_ERROR;
    }
  }
  return rc;
}

}  // namespace

STRIDER_EXPORT int MPI_Waitsome(int incount, MPI_Request requests_[], int* outcount, int indices[],
                                MPI_Status statuses[]) {
  const auto next = STRIDER_NEXT(MPI_Waitsome);
  requests().progress_orphans();
  if (incount <= 0 || !any_tracked(incount, requests_)) {
    return next(incount, requests_, outcount, indices, statuses);
  }
  return some(incount, requests_, outcount, indices, statuses,
              [&](MPI_Status* s) { return next(incount, requests_, outcount, indices, s); });
}

STRIDER_EXPORT int MPI_Testsome(int incount, MPI_Request requests_[], int* outcount, int indices[],
                                MPI_Status statuses[]) {
  const auto next = STRIDER_NEXT(MPI_Testsome);
  requests().progress_orphans();
  if (incount <= 0 || !any_tracked(incount, requests_)) {
    return next(incount, requests_, outcount, indices, statuses);
  }
  return some(incount, requests_, outcount, indices, statuses,
              [&](MPI_Status* s) { return next(incount, requests_, outcount, indices, s); });
}

// A freed request's operation goes on: Strider keeps the request and completes the operation
// when it sees it done (the application can no longer ask).
STRIDER_EXPORT int MPI_Request_free(MPI_Request* request) {
  const auto next = STRIDER_NEXT(MPI_Request_free);
  if (request == nullptr || !requests().tracked(*request)) return next(request);
  auto op = requests().take(*request);
  requests().orphan(*request, std::move(*op));
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}
