// Completion: MPI_Wait/Test and their -all/-any/-some forms, MPI_Request_get_status,
// MPI_Request_free. The MPI completes
// the requests (they are its own); Strider then finishes the operations it tracks under those
// that completed: unpacking receives, releasing wire buffers. The operations are claimed before
// the MPI is called, since a handle the MPI frees may at once be handed to another thread's new
// operation, and those whose requests did not complete are put back. With nothing tracked the
// calls cost an atomic load or two more than the MPI's.
#include <mpi.h>

#include <optional>
#include <vector>

#include "transfer/next.hpp"
#include "transfer/requests.hpp"

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

// The operations tracked under an array of requests, claimed for one completion call.
class Claimed {
 public:
  Claimed(int n, const MPI_Request* r) {
    if (requests().empty()) return;
    for (int i = 0; i < n; ++i) {
      if (r[i] == MPI_REQUEST_NULL) continue;
      auto op = requests().take(r[i]);
      if (!op) continue;
      if (ops_.empty()) {
        ops_.resize(static_cast<std::size_t>(n));
        handles_.resize(static_cast<std::size_t>(n));
      }
      ops_[i] = std::move(op);
      handles_[i] = r[i];
    }
  }
  bool any() const { return !ops_.empty(); }
  bool has(int i) const { return any() && ops_[i].has_value(); }

  // Request i completed (the MPI freed it): runs its operation's completion.
  int finish(int i, const MPI_Status& status, bool succeeded) {
    Pending op = std::move(*ops_[i]);
    ops_[i].reset();
    return complete(op, status, succeeded);
  }

  // Request i is complete but stays live (MPI_Request_get_status): a receive is unpacked now,
  // so the data is in place when the application sees the flag.
  int unpack_early(int i, const MPI_Status& status) {
    if (auto* in = std::get_if<Incoming>(&*ops_[i])) return unpack_incoming(*in, status, true);
    return MPI_SUCCESS;
  }

  // Puts back what did not complete (the request is still live).
  ~Claimed() {
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i]) requests().put_back(handles_[i], std::move(*ops_[i]));
    }
  }

 private:
  std::vector<std::optional<Pending>> ops_;
  std::vector<MPI_Request> handles_;
};

// For one request (Wait, Test, -any): its completion, or the MPI's error.
int finish_one(Claimed& claimed, int i, const MPI_Status& status, int rc) {
  const int e = claimed.finish(i, status, rc == MPI_SUCCESS);
  return rc != MPI_SUCCESS ? rc : e;
}

// For the -all and -some forms: finishes request i (status `s`) and folds an unpack error into
// the statuses. `mpi_rc` is what the MPI returned; `rc` what the call will return.
void finish_in_array(Claimed& claimed, int i, MPI_Status& s, int mpi_rc, int& rc,
                     MPI_Status* others, int n_others) {
  const bool succeeded =
      mpi_rc == MPI_SUCCESS || (mpi_rc == MPI_ERR_IN_STATUS && s.MPI_ERROR == MPI_SUCCESS);
  const int e = claimed.finish(i, s, succeeded);
  if (e == MPI_SUCCESS) return;
  if (rc == MPI_SUCCESS) {
    // The first error Strider adds: the statuses now carry every request's outcome.
    for (int k = 0; k < n_others; ++k) others[k].MPI_ERROR = MPI_SUCCESS;
  }
  s.MPI_ERROR = e;
  rc = MPI_ERR_IN_STATUS;
}

// Where the caller ignores statuses, an error found only in them is returned directly.
int error_of(int rc, const Statuses& st, int n) {
  if (rc != MPI_ERR_IN_STATUS || st.scratch.empty()) return rc;
  for (int k = 0; k < n; ++k) {
    const int e = st.scratch[k].MPI_ERROR;
    if (e != MPI_SUCCESS && e != MPI_ERR_PENDING) return e;
  }
  return rc;
}

// Waitall and Testall: `call(statuses)` runs the MPI's; `done` says whether it completed all.
template <class Call>
int all(int count, MPI_Request requests_[], MPI_Status statuses[], Call call) {
  Claimed claimed(count, requests_);
  Statuses st(statuses, count);
  bool done = true;
  const int mpi_rc = call(st.use, done);
  if (!done) return mpi_rc;
  int rc = mpi_rc;
  for (int i = 0; i < count; ++i) {
    // Only requests the MPI freed completed (MPI_ERR_PENDING ones stay live and tracked).
    if (!claimed.has(i) || requests_[i] != MPI_REQUEST_NULL) continue;
    finish_in_array(claimed, i, st.use[i], mpi_rc, rc, st.use, count);
  }
  return error_of(rc, st, count);
}

// Waitsome and Testsome.
template <class Call>
int some(int incount, MPI_Request requests_[], int* outcount, int indices[], MPI_Status statuses[],
         Call call) {
  Claimed claimed(incount, requests_);
  Statuses st(statuses, incount);
  const int mpi_rc = call(st.use);
  if (*outcount == MPI_UNDEFINED || *outcount <= 0) return mpi_rc;
  int rc = mpi_rc;
  for (int k = 0; k < *outcount; ++k) {
    const int i = indices[k];
    if (!claimed.has(i) || requests_[i] != MPI_REQUEST_NULL) continue;
    finish_in_array(claimed, i, st.use[k], mpi_rc, rc, st.use, *outcount);
  }
  return error_of(rc, st, *outcount);
}

}  // namespace
}  // namespace strider::interpose

using namespace strider::interpose;

STRIDER_EXPORT int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  const auto next = STRIDER_NEXT(MPI_Wait);
  ProgressOrphans progress;
  if (request == nullptr) return next(request, status);
  Claimed claimed(1, request);
  if (!claimed.any()) return next(request, status);
  Status st(status);
  const int rc = next(request, st.use);
  if (*request != MPI_REQUEST_NULL) return rc;  // not completed (an error left it live)
  return finish_one(claimed, 0, *st.use, rc);
}

STRIDER_EXPORT int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  const auto next = STRIDER_NEXT(MPI_Test);
  ProgressOrphans progress;
  if (request == nullptr) return next(request, flag, status);
  Claimed claimed(1, request);
  if (!claimed.any()) return next(request, flag, status);
  Status st(status);
  const int rc = next(request, flag, st.use);
  if (*request != MPI_REQUEST_NULL) return rc;  // not complete, or an error left it live
  return finish_one(claimed, 0, *st.use, rc);
}

STRIDER_EXPORT int MPI_Waitall(int count, MPI_Request requests_[], MPI_Status statuses[]) {
  const auto next = STRIDER_NEXT(MPI_Waitall);
  ProgressOrphans progress;
  if (count <= 0 || requests().empty()) return next(count, requests_, statuses);
  return all(count, requests_, statuses, [&](MPI_Status* s, bool& done) {
    done = true;
    return next(count, requests_, s);
  });
}

STRIDER_EXPORT int MPI_Testall(int count, MPI_Request requests_[], int* flag,
                               MPI_Status statuses[]) {
  const auto next = STRIDER_NEXT(MPI_Testall);
  ProgressOrphans progress;
  if (count <= 0 || requests().empty()) return next(count, requests_, flag, statuses);
  return all(count, requests_, statuses, [&](MPI_Status* s, bool& done) {
    const int rc = next(count, requests_, flag, s);
    // Without all complete nothing was freed, unless an error reported per request.
    done = *flag || rc == MPI_ERR_IN_STATUS;
    return rc;
  });
}

STRIDER_EXPORT int MPI_Waitany(int count, MPI_Request requests_[], int* index, MPI_Status* status) {
  const auto next = STRIDER_NEXT(MPI_Waitany);
  ProgressOrphans progress;
  if (count <= 0 || requests().empty()) return next(count, requests_, index, status);
  Claimed claimed(count, requests_);
  if (!claimed.any()) return next(count, requests_, index, status);
  Status st(status);
  const int rc = next(count, requests_, index, st.use);
  const int i = *index;
  if (i == MPI_UNDEFINED || i < 0 || i >= count || !claimed.has(i) ||
      requests_[i] != MPI_REQUEST_NULL) {
    return rc;
  }
  return finish_one(claimed, i, *st.use, rc);
}

STRIDER_EXPORT int MPI_Testany(int count, MPI_Request requests_[], int* index, int* flag,
                               MPI_Status* status) {
  const auto next = STRIDER_NEXT(MPI_Testany);
  ProgressOrphans progress;
  if (count <= 0 || requests().empty()) return next(count, requests_, index, flag, status);
  Claimed claimed(count, requests_);
  if (!claimed.any()) return next(count, requests_, index, flag, status);
  Status st(status);
  const int rc = next(count, requests_, index, flag, st.use);
  const int i = *index;
  if (!*flag || i == MPI_UNDEFINED || i < 0 || i >= count || !claimed.has(i) ||
      requests_[i] != MPI_REQUEST_NULL) {
    return rc;
  }
  return finish_one(claimed, i, *st.use, rc);
}

STRIDER_EXPORT int MPI_Waitsome(int incount, MPI_Request requests_[], int* outcount, int indices[],
                                MPI_Status statuses[]) {
  const auto next = STRIDER_NEXT(MPI_Waitsome);
  ProgressOrphans progress;
  if (incount <= 0 || requests().empty()) {
    return next(incount, requests_, outcount, indices, statuses);
  }
  return some(incount, requests_, outcount, indices, statuses,
              [&](MPI_Status* s) { return next(incount, requests_, outcount, indices, s); });
}

STRIDER_EXPORT int MPI_Testsome(int incount, MPI_Request requests_[], int* outcount, int indices[],
                                MPI_Status statuses[]) {
  const auto next = STRIDER_NEXT(MPI_Testsome);
  ProgressOrphans progress;
  if (incount <= 0 || requests().empty()) {
    return next(incount, requests_, outcount, indices, statuses);
  }
  return some(incount, requests_, outcount, indices, statuses,
              [&](MPI_Status* s) { return next(incount, requests_, outcount, indices, s); });
}

STRIDER_EXPORT int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  const auto next = STRIDER_NEXT(MPI_Request_get_status);
  if (request == MPI_REQUEST_NULL || requests().empty()) return next(request, flag, status);
  Claimed claimed(1, &request);
  if (!claimed.any()) return next(request, flag, status);
  Status st(status);
  const int rc = next(request, flag, st.use);
  if (rc != MPI_SUCCESS || !*flag) return rc;
  return claimed.unpack_early(0, *st.use);
}

// A freed request's operation goes on: Strider keeps the request and completes the operation
// when it sees it done (the application can no longer ask).
STRIDER_EXPORT int MPI_Request_free(MPI_Request* request) {
  const auto next = STRIDER_NEXT(MPI_Request_free);
  if (request == nullptr || *request == MPI_REQUEST_NULL || requests().empty()) {
    return next(request);
  }
  auto op = requests().take(*request);
  if (!op) return next(request);
  requests().orphan(*request, std::move(*op));
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}
