#include "calls/completion.hpp"

#include "calls/early_arrivals.hpp"
#include "offers/protocol.hpp"
#include "runtime/profile.hpp"

namespace strider::calls {

Claimed::Claimed(int n, MPI_Request* r, bool some) : live_(r) {
  if (some && transfer::requests().single_caller()) {
    if (transfer::requests().empty()) return;
    lazy_ = true;
    before_ = transfer::requests().tracked_so_far();
    handles_.assign(r, r + n);
    return;
  }
  if (transfer::requests().take_all(n, r, ops_)) handles_.assign(r, r + n);
}

bool Claimed::has(int i) { return lazy_ ? looked_up(i) != nullptr : !ops_.empty() && ops_[i]; }

transfer::OperationPtr& Claimed::op(int i) { return lazy_ ? looked_up(i) : ops_[i]; }

transfer::OperationPtr& Claimed::looked_up(int i) {
  if (entry_of_.empty()) {
    for (auto& [j, op] : looked_) {
      if (j == i) return op;
    }
  } else if (const int k = entry_of_[static_cast<std::size_t>(i)]; k >= 0) {
    return looked_[static_cast<std::size_t>(k)].second;
  }
  transfer::OperationPtr op;
  if (handles_[i] != MPI_REQUEST_NULL) op = transfer::requests().take(handles_[i], before_);
  looked_.emplace_back(i, std::move(op));
  const int k = static_cast<int>(looked_.size()) - 1;
  if (!entry_of_.empty()) {
    entry_of_[static_cast<std::size_t>(i)] = k;
  } else if (looked_.size() > kScannedEntries) {
    // Many looked up (every request, to find the unstarted ones): an index by request from now.
    entry_of_.assign(handles_.size(), -1);
    for (std::size_t e = 0; e < looked_.size(); ++e)
      entry_of_[looked_[e].first] = static_cast<int>(e);
  }
  return looked_.back().second;
}

int Claimed::finish(int i, MPI_Status& status, int error) {
  const transfer::OperationPtr op = std::move(this->op(i));
  if (op->incoming()) ++receives_finished_;
  const int rc = op->complete(status, error);
  if (op->one_shot() && live_[i] != MPI_REQUEST_NULL) PMPI_Request_free(&live_[i]);
  return rc;
}

void Claimed::unpack_wave(const std::vector<std::pair<int, MPI_Status*>>& done, int mpi_rc) {
  std::vector<transfer::Incoming*> ins;
  std::vector<MPI_Status*> statuses;
  std::vector<int> errors;
  for (const auto& [i, status] : done) {
    transfer::Incoming* in = op(i)->incoming();
    if (!in) continue;
    ins.push_back(in);
    statuses.push_back(status);
    errors.push_back(mpi_rc == MPI_ERR_IN_STATUS ? status->MPI_ERROR : mpi_rc);
  }
  if (ins.empty()) return;
  // The receives of later completion calls that have arrived too join the wave.
  std::vector<EarlyArrival> early = collect_arrivals();
  const ArrivalsBack back(early);
  for (EarlyArrival& a : early) {
    ins.push_back(a.op->incoming());
    statuses.push_back(&a.status);
    errors.push_back(MPI_SUCCESS);
  }
  offers::settle_wave(ins, statuses, errors);
  const runtime::Timed timed(runtime::Phase::UnpackWave);
  transfer::unpack_wave(ins, statuses, errors);
}

int Claimed::observe_complete(int i, MPI_Status& status) {
  return has(i) ? op(i)->observe_complete(status) : MPI_SUCCESS;
}

Claimed::~Claimed() {
  if (receives_finished_ > 0) transfer::requests().note_receives_finished(receives_finished_);
  for (auto& [i, op] : looked_) {
    if (op) transfer::requests().put_back(handles_[i], std::move(op));
  }
  for (const transfer::OperationPtr& op : ops_) {
    if (op) {
      transfer::requests().put_back_all(handles_, ops_);
      return;
    }
  }
}

int finish_one(Claimed& claimed, int i, MPI_Status& status, int rc) {
  // A receive: in a wave with those of later calls that have arrived too, where any may have.
  if (any_noted()) claimed.unpack_wave({{i, &status}}, rc);
  const int e = claimed.finish(i, status, rc);
  return rc != MPI_SUCCESS ? rc : e;
}

void finish_in_array(Claimed& claimed, int i, MPI_Status& s, int mpi_rc, int& rc,
                     MPI_Status* others, int n_others) {
  const int error = mpi_rc == MPI_ERR_IN_STATUS ? s.MPI_ERROR : mpi_rc;
  const int e = claimed.finish(i, s, error);
  if (e == MPI_SUCCESS) return;
  if (rc == MPI_SUCCESS) {
    // The first error Strider adds: the statuses now carry every request's outcome.
    for (int k = 0; k < n_others; ++k) others[k].MPI_ERROR = MPI_SUCCESS;
  }
  s.MPI_ERROR = e;
  rc = MPI_ERR_IN_STATUS;
}

namespace {

// The status of a send that completed without the MPI (its fields are not significant).
void empty_status(MPI_Status& s) {
  s.MPI_SOURCE = MPI_ANY_SOURCE;
  s.MPI_TAG = MPI_ANY_TAG;
  s.MPI_ERROR = MPI_SUCCESS;
  PMPI_Status_set_elements(&s, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(&s, 0);
}

}  // namespace

bool report_unstarted_any(Claimed& claimed, int count, const MPI_Request* requests, int* index,
                          MPI_Status& status, int& rc) {
  if (!transfer::requests().has_unstarted()) return false;
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL || !claimed.unstarted(i)) continue;
    empty_status(status);
    *index = i;
    rc = finish_one(claimed, i, status, MPI_SUCCESS);
    return true;
  }
  return false;
}

bool report_unstarted_some(Claimed& claimed, int incount, const MPI_Request* requests,
                           int* outcount, int indices[], Statuses& st, int& rc) {
  if (!transfer::requests().has_unstarted()) return false;
  int n = 0;
  for (int i = 0; i < incount; ++i) {
    if (requests[i] != MPI_REQUEST_NULL && claimed.unstarted(i)) indices[n++] = i;
  }
  if (n == 0) return false;
  *outcount = n;
  rc = MPI_SUCCESS;
  for (int k = 0; k < n; ++k) empty_status(st.use[k]);
  for (int k = 0; k < n; ++k)
    finish_in_array(claimed, indices[k], st.use[k], MPI_SUCCESS, rc, st.use, n);
  rc = error_of(rc, st, n);
  return true;
}

int error_of(int rc, const Statuses& st, int n) {
  if (rc != MPI_ERR_IN_STATUS || st.scratch.empty()) return rc;
  for (int k = 0; k < n; ++k) {
    const int e = st.scratch[k].MPI_ERROR;
    if (e != MPI_SUCCESS && e != MPI_ERR_PENDING) return e;
  }
  return rc;
}

}  // namespace strider::calls
