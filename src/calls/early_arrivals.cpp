#include "calls/early_arrivals.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>

#include "calls/p2p_operations.hpp"
#include "transfer/requests.hpp"
#include "transfer/settings.hpp"
#include "transfer/state.hpp"
#include "transfer/wire.hpp"

namespace strider::calls {
namespace {

// A wave asks about this many noted receives: each one that has not arrived costs the MPI a poll
// of its progress.
constexpr std::size_t kAskedPerWave = 16;
// Past this many noted receives not yet seen complete, further ones are not noted.
constexpr std::size_t kMaxNoted = 4096;

struct NotedReceive {
  MPI_Request request = MPI_REQUEST_NULL;
  std::uint64_t tracked_as = 0;  // Operation::tracked_as: a handle the MPI reused names another
};

struct Noted {
  std::mutex mutex;
  // Longest waiting first: those asked about that had not arrived go to the back, so that one
  // that never arrives (a receive posted for the end of a run) holds up no other.
  std::vector<NotedReceive> receives;
  std::atomic<std::size_t> size{0};
};

Noted& noted() {
  static Noted* n = new Noted;  // outlives static destruction at exit
  return *n;
}

// While it lives, an error the MPI finds in a request it is asked about returns to Strider
// instead of calling MPI_COMM_WORLD's handler (MPICH reports a receive's error from
// MPI_Request_get_status through it): the application's own completion call reports it.
class QuietWorld {
 public:
  QuietWorld() {
    if (PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved_) != MPI_SUCCESS) return;
    set_ = PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) == MPI_SUCCESS;
  }
  ~QuietWorld() {
    if (set_) PMPI_Comm_set_errhandler(MPI_COMM_WORLD, saved_);
    if (saved_ != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&saved_);
  }
  QuietWorld(const QuietWorld&) = delete;
  QuietWorld& operator=(const QuietWorld&) = delete;

 private:
  MPI_Errhandler saved_ = MPI_ERRHANDLER_NULL;
  bool set_ = false;
};

}  // namespace

void note_posted(MPI_Request request, std::uint64_t tracked_as) {
  const transfer::Requests& r = transfer::requests();
  if (!transfer::settings().bursts || !r.single_caller() || r.receives_finished_together() != 1) {
    return;
  }
  Noted& n = noted();
  std::lock_guard lock(n.mutex);
  if (n.receives.size() >= kMaxNoted) return;
  n.receives.push_back({request, tracked_as});
  n.size.store(n.receives.size(), std::memory_order_relaxed);
}

bool any_noted() { return noted().size.load(std::memory_order_relaxed) != 0; }

std::vector<EarlyArrival> collect_arrivals() {
  std::vector<EarlyArrival> arrived;
  if (!any_noted()) return arrived;
  Noted& n = noted();
  // The ones to ask, out of the list: no lock is held while the MPI runs (its error handlers and
  // progress may call back into Strider).
  std::vector<NotedReceive> asked;
  {
    std::lock_guard lock(n.mutex);
    const std::size_t k = std::min(kAskedPerWave, n.receives.size());
    asked.assign(n.receives.begin(), n.receives.begin() + static_cast<std::ptrdiff_t>(k));
    n.receives.erase(n.receives.begin(), n.receives.begin() + static_cast<std::ptrdiff_t>(k));
  }
  std::vector<NotedReceive> waiting;  // asked, not arrived: back to the list's end
  {
    const QuietWorld quiet;
    for (const NotedReceive& e : asked) {
      // A completion call holding it took it already; a handle the MPI reused holds another.
      transfer::OperationPtr op = transfer::requests().take(e.request);
      auto* receive = dynamic_cast<ReceiveOperation*>(op.get());
      if (!receive || receive->tracked_as() != e.tracked_as || !receive->may_join_early()) {
        if (op) transfer::requests().put_back(e.request, std::move(op));
        continue;
      }
      int flag = 0;
      MPI_Status status{};
      status.MPI_ERROR = MPI_SUCCESS;
      const bool asked_ok = PMPI_Request_get_status(e.request, &flag, &status) == MPI_SUCCESS;
      // Only what the wave's kernel will unpack is worth taking; any other arrival is its own
      // call's to finish, as before.
      if (asked_ok && flag && transfer::plain_arrival(*op->incoming(), status, status.MPI_ERROR)) {
        arrived.push_back({e.request, std::move(op), status});
        continue;
      }
      transfer::requests().put_back(e.request, std::move(op));
      if (asked_ok && !flag) waiting.push_back(e);  // complete otherwise: its own call unpacks it
    }
  }
  std::lock_guard lock(n.mutex);
  n.receives.insert(n.receives.end(), waiting.begin(), waiting.end());
  n.size.store(n.receives.size(), std::memory_order_relaxed);
  return arrived;
}

ArrivalsBack::~ArrivalsBack() {
  for (EarlyArrival& a : arrivals_) {
    if (!a.op) continue;
    if (a.op->incoming()->unpacked) transfer::counters().receives_early++;
    transfer::requests().put_back(a.request, std::move(a.op));
  }
}

}  // namespace strider::calls
