#include "calls/persistent_requests.hpp"

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "calls/persistent.hpp"
#include "calls/persistent_starts.hpp"
#include "transfer/requests.hpp"

namespace strider::calls {
namespace {

// The served requests, by the MPI's handle (live from init to MPI_Request_free).
class PersistentTable {
 public:
  void put(MPI_Request request, PersistentPtr p) {
    std::lock_guard lock(mutex_);
    table_[request] = std::move(p);
    size_.store(table_.size(), std::memory_order_release);
  }
  PersistentPtr find(MPI_Request request) const {
    if (size_.load(std::memory_order_acquire) == 0) return nullptr;
    std::lock_guard lock(mutex_);
    const auto it = table_.find(request);
    return it == table_.end() ? nullptr : it->second;
  }
  PersistentPtr take(MPI_Request request) {
    if (size_.load(std::memory_order_acquire) == 0) return nullptr;
    std::lock_guard lock(mutex_);
    const auto it = table_.find(request);
    if (it == table_.end()) return nullptr;
    PersistentPtr p = std::move(it->second);
    table_.erase(it);
    size_.store(table_.size(), std::memory_order_release);
    return p;
  }
  bool empty() const { return size_.load(std::memory_order_acquire) == 0; }
  void clear() {
    std::lock_guard lock(mutex_);
    table_.clear();
    size_.store(0, std::memory_order_release);
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<MPI_Request, PersistentPtr> table_;
  std::atomic<std::size_t> size_{0};
};

PersistentTable& table() {
  static PersistentTable* t = new PersistentTable;  // outlives static destruction at exit
  return *t;
}

}  // namespace

void keep_persistent(MPI_Request request, PersistentPtr p) { table().put(request, std::move(p)); }

int persistent_collective(MPI_Comm comm, const char* name, const char* instead,
                          std::initializer_list<const void*> buffers, MPI_Info info,
                          MPI_Request* request,
                          const std::function<int(const collective::Form&)>& serve,
                          const std::function<int()>& next) {
  if (request == nullptr) return next();  // the application's error, which the MPI reports
  if (mpi_persistent_collective_unreliable(name, comm)) {
    return refuse_persistent(buffers) ? persistent_refused(comm, name, instead) : next();
  }
  std::shared_ptr<collective::Call> kept;
  const int rc = serve(collective::Form::persistent(info, request, &kept));
  if (rc != MPI_SUCCESS || !kept) return rc;
  auto p = std::make_shared<PersistentTransfer>();
  p->comm = comm;
  p->collective = std::move(kept);
  transfer::counters().persistent_served++;
  keep_persistent(*request, std::move(p));
  return MPI_SUCCESS;
}

int start_persistent(int n, MPI_Request* requests, const std::function<int()>& start) {
  if (table().empty() || n <= 0 || requests == nullptr) return start();
  std::vector<PersistentPtr> served(static_cast<std::size_t>(n));
  bool any = false;
  for (int i = 0; i < n; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    served[static_cast<std::size_t>(i)] = table().find(requests[i]);
    any = any || served[static_cast<std::size_t>(i)] != nullptr;
  }
  return any ? start_served(served, requests, start) : start();
}

bool free_persistent(MPI_Request* request, int& rc) {
  PersistentPtr p = table().take(*request);
  if (!p) return false;
  if (transfer::OperationPtr started = transfer::requests().take(*request)) {
    // Active: it completes first; the orphans' poll then frees the MPI's request.
    transfer::requests().orphan(*request, std::move(started));
    *request = MPI_REQUEST_NULL;
    rc = MPI_SUCCESS;
    return true;
  }
  rc = PMPI_Request_free(request);
  return true;
}

void forget_persistent() { table().clear(); }

}  // namespace strider::calls
