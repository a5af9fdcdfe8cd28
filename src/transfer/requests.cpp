#include "transfer/requests.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include "runtime/log.hpp"

namespace strider::transfer {
namespace {

// A completed request the MPI did not free is a persistent one, now inactive: the application
// freed it while active, so Strider frees it now.
void free_if_live(MPI_Request& request) {
  if (request != MPI_REQUEST_NULL) PMPI_Request_free(&request);
}

// A handle as a key: a pointer (Open MPI) or an integer (MPICH).
template <class Handle>
std::uint64_t handle_key(Handle h) {
  if constexpr (std::is_pointer_v<Handle>) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(h));
  } else {
    return static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<Handle>>(h));
  }
}

}  // namespace

void Requests::Tracked::insert(OperationPtr op) {
  if (!first) {
    first = std::move(op);
    return;
  }
  const auto later = [&op](const OperationPtr& o) { return o->tracked_as() > op->tracked_as(); };
  if (later(first)) {
    more.insert(more.begin(), std::move(first));
    first = std::move(op);
    return;
  }
  more.insert(std::find_if(more.begin(), more.end(), later), std::move(op));
}

OperationPtr Requests::Tracked::take(std::uint64_t before) {
  for (auto it = more.rbegin(); it != more.rend(); ++it) {
    if ((*it)->tracked_as() >= before) continue;
    OperationPtr op = std::move(*it);
    more.erase(std::next(it).base());
    return op;
  }
  if (!first || first->tracked_as() >= before) return nullptr;
  OperationPtr op = std::move(first);
  if (!more.empty()) {
    first = std::move(more.front());
    more.erase(more.begin());
  }
  return op;
}

Requests& requests() {
  static Requests* r = new Requests;  // outlives static destruction at exit
  return *r;
}

std::uint64_t Requests::key(MPI_Request request) { return handle_key(request); }

Requests::Tracked* Requests::find_locked(MPI_Request request) {
  const std::uint32_t n = table_.find(key(request));
  return n == runtime::FlatIndex::kNone ? nullptr : &table_[n].tracked;
}

Requests::Tracked& Requests::find_or_add_locked(MPI_Request request) {
  if (Tracked* t = find_locked(request)) return *t;
  return table_[table_.add(key(request))].tracked;
}

std::uint64_t Requests::track(MPI_Request request, OperationPtr op) {
  std::lock_guard lock(mutex_);
  const std::uint64_t as = tracked_.load(std::memory_order_relaxed);
  op->tracked_as_ = as;
  find_or_add_locked(request).insert(std::move(op));
  size_.fetch_add(1, std::memory_order_release);
  tracked_.store(as + 1, std::memory_order_release);
  return as;
}

OperationPtr Requests::take(MPI_Request request, std::uint64_t before) {
  if (empty()) return nullptr;
  std::lock_guard lock(mutex_);
  return take_locked(request, before);
}

bool Requests::take_all(int n, const MPI_Request* requests, std::vector<OperationPtr>& out) {
  if (empty()) return false;
  bool any = false;
  std::lock_guard lock(mutex_);
  for (int i = 0; i < n; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    OperationPtr op = take_locked(requests[i], UINT64_MAX);
    if (!op) continue;
    if (!any) out.resize(static_cast<std::size_t>(n));
    out[static_cast<std::size_t>(i)] = std::move(op);
    any = true;
  }
  return any;
}

OperationPtr Requests::take_locked(MPI_Request request, std::uint64_t before) {
  const std::uint32_t n = table_.find(key(request));
  if (n == runtime::FlatIndex::kNone) return nullptr;
  OperationPtr op = table_[n].tracked.take(before);
  if (!op) return nullptr;
  if (table_[n].tracked.empty()) table_.remove(n);
  size_.fetch_sub(1, std::memory_order_release);
  return op;
}

void Requests::put_back(MPI_Request request, OperationPtr op) {
  std::lock_guard lock(mutex_);
  find_or_add_locked(request).insert(std::move(op));
  size_.fetch_add(1, std::memory_order_release);
}

void Requests::put_back_all(const std::vector<MPI_Request>& requests,
                            std::vector<OperationPtr>& ops) {
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i]) continue;
    find_or_add_locked(requests[i]).insert(std::move(ops[i]));
    size_.fetch_add(1, std::memory_order_release);
  }
}

Requests::CancelVerdict Requests::cancel_verdict(MPI_Request request) {
  std::lock_guard lock(mutex_);
  Tracked* t = find_locked(request);
  if (t == nullptr || t->empty()) return CancelVerdict::Untracked;
  // The newest is the live request's (an older one awaits a completion call's claim).
  Operation* op = t->newest();
  if (!op->may_cancel()) return CancelVerdict::Refuse;
  return op->numbered_send() ? CancelVerdict::ForwardSend : CancelVerdict::Forward;
}

void Requests::orphan(MPI_Request request, OperationPtr op) {
  std::lock_guard lock(orphans_mutex_);
  orphans_.emplace_back(request, std::move(op));
  orphans_size_.store(orphans_.size(), std::memory_order_release);
}

void Requests::progress_orphans() {
  if (!has_orphans()) return;
  std::unique_lock lock(orphans_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is at it
  for (std::size_t i = 0; i < orphans_.size();) {
    MPI_Status status;
    int done = 0;
    const int rc = PMPI_Test(&orphans_[i].first, &done, &status);
    if (!done && rc == MPI_SUCCESS) {
      ++i;
      continue;
    }
    orphans_[i].second->complete(status, rc);
    free_if_live(orphans_[i].first);
    orphans_[i] = std::move(orphans_.back());
    orphans_.pop_back();
  }
  orphans_size_.store(orphans_.size(), std::memory_order_release);
}

void Requests::drain_orphans() {
  std::lock_guard lock(orphans_mutex_);
  for (auto& [request, op] : orphans_) {
    MPI_Status status;
    int done = 0;
    int rc = PMPI_Test(&request, &done, &status);
    // A freed receive that never matched would hold MPI_Finalize forever: cancel it (a send
    // must still complete, as it would without Strider).
    if (!done && rc == MPI_SUCCESS && op->cancel_at_finalize()) {
      PMPI_Cancel(&request);
    }
    if (!done && rc == MPI_SUCCESS) rc = PMPI_Wait(&request, &status);
    op->complete(status, rc);
    free_if_live(request);
  }
  orphans_.clear();
  orphans_size_.store(0, std::memory_order_release);
}

}  // namespace strider::transfer
