#include "calls/persistent_requests.hpp"

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "calls/persistent.hpp"
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

// One start of a served point-to-point request, tracked under it until the MPI reports it
// complete (the request then stays, inactive, for the next start). A collective's start is a
// collective::CollectiveOperation.
class PersistentStart final : public transfer::Operation {
 public:
  explicit PersistentStart(PersistentPtr p) : p_(std::move(p)) {}
  int complete(MPI_Status& status, int error) override {
    if (!p_->receive) return MPI_SUCCESS;
    const int rc = transfer::unpack_incoming(p_->in, status, error);
    rearm();
    return rc;
  }
  int observe_complete(MPI_Status& status) override {
    return p_->receive ? transfer::unpack_incoming(p_->in, status, MPI_SUCCESS) : MPI_SUCCESS;
  }
  bool cancel_at_finalize() const override { return p_->receive; }
  bool persistent() const override { return true; }
  transfer::Incoming* incoming() override { return p_->receive ? &p_->in : nullptr; }

 private:
  // Ready for the next start: nothing unpacked yet, no hole closed.
  void rearm() {
    p_->in.unpacked = false;
    p_->in.unpack_rc = MPI_SUCCESS;
    p_->in.hole_closed = false;
  }
  PersistentPtr p_;
};

transfer::OperationPtr operation_for_start(const PersistentPtr& p) {
  if (p->collective) return std::make_unique<collective::CollectiveOperation>(p->collective, true);
  return std::make_unique<PersistentStart>(p);
}

}  // namespace

void keep_persistent(MPI_Request request, PersistentPtr p) { table().put(request, std::move(p)); }

int persistent_collective(MPI_Comm comm, const char* name, const char* instead,
                          std::initializer_list<const void*> buffers, MPI_Info info,
                          MPI_Request* request,
                          const std::function<int(const collective::Form&)>& serve,
                          const std::function<int()>& next) {
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
  std::vector<transfer::Outbound> sends;
  std::vector<collective::Call*> collectives;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    PersistentPtr& p = served[static_cast<std::size_t>(i)];
    if (requests[i] != MPI_REQUEST_NULL) p = table().find(requests[i]);
    if (!p) continue;
    any = true;
    if (p->collective) {
      collectives.push_back(p->collective.get());
    } else if (!p->receive) {
      sends.push_back({&p->object, &p->out, p->comm});
    }
  }
  if (!any) return start();
  std::vector<char> packed;
  transfer::pack_wave(sends, packed);
  for (std::size_t k = 0; k < sends.size(); ++k) {
    if (packed[k]) continue;
    const int rc = transfer::pack_prepared(*sends[k].object, *sends[k].out, sends[k].comm);
    if (rc != MPI_SUCCESS) return rc;
  }
  for (collective::Call* c : collectives) {
    if (const int rc = collective::load(*c)) return rc;
  }
  const int rc = start();
  if (rc != MPI_SUCCESS) return rc;
  for (int i = 0; i < n; ++i) {
    PersistentPtr& p = served[static_cast<std::size_t>(i)];
    if (p) transfer::requests().track(requests[i], operation_for_start(p));
  }
  return MPI_SUCCESS;
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
