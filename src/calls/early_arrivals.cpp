#include "calls/early_arrivals.hpp"

#include <atomic>
#include <mutex>
#include <utility>

#include "calls/p2p_operations.hpp"
#include "transfer/requests.hpp"
#include "transfer/settings.hpp"
#include "transfer/state.hpp"

namespace strider::calls {
namespace {

// A wave asks about this many of the oldest noted receives: each one that has not arrived costs
// the MPI a poll of its progress.
constexpr std::size_t kAskedPerWave = 16;
// Past this many noted receives not yet seen complete, further ones are not noted.
constexpr std::size_t kMaxNoted = 4096;

struct Noted {
  std::mutex mutex;
  // Oldest first; an entry goes once its receive has joined a wave or is no longer tracked
  // (completed, freed).
  std::vector<std::pair<MPI_Request, const ReceiveOperation*>> receives;
  std::atomic<std::size_t> size{0};
};

Noted& noted() {
  static Noted* n = new Noted;  // outlives static destruction at exit
  return *n;
}

// Whether what the MPI's status says arrived is a whole message Strider unpacks as it is: not
// cancelled, and no more than the wire was posted for (more is a truncation, which the
// completion call reports as before, unpacking nothing).
bool arrived_whole(const transfer::Incoming& in, const MPI_Status& status) {
  int cancelled = 0, bytes = 0;
  return PMPI_Test_cancelled(&status, &cancelled) == MPI_SUCCESS && !cancelled &&
         PMPI_Get_count(&status, MPI_BYTE, &bytes) == MPI_SUCCESS && bytes != MPI_UNDEFINED &&
         bytes <= in.post.posted;
}

}  // namespace

void note_posted(MPI_Request request, const ReceiveOperation* op) {
  const transfer::Requests& r = transfer::requests();
  if (!transfer::settings().bursts || !r.single_caller() || r.receives_finished_together() != 1) {
    return;
  }
  Noted& n = noted();
  std::lock_guard lock(n.mutex);
  if (n.receives.size() >= kMaxNoted) return;
  n.receives.emplace_back(request, op);
  n.size.store(n.receives.size(), std::memory_order_relaxed);
}

std::vector<EarlyArrival> collect_arrivals() {
  std::vector<EarlyArrival> arrived;
  Noted& n = noted();
  if (n.size.load(std::memory_order_relaxed) == 0) return arrived;
  std::lock_guard lock(n.mutex);
  std::vector<char> gone(n.receives.size(), 0);
  std::size_t asked = 0;
  for (std::size_t e = 0; e < n.receives.size() && asked < kAskedPerWave; ++e) {
    const auto [request, expected] = n.receives[e];
    // A completion call holding it took it already; a handle the MPI reused holds another.
    transfer::OperationPtr op = transfer::requests().take(request);
    auto* receive = dynamic_cast<ReceiveOperation*>(op.get());
    if (!receive || receive != expected || !receive->may_join_early()) {
      if (op) transfer::requests().put_back(request, std::move(op));
      gone[e] = 1;
      continue;
    }
    ++asked;
    int flag = 0;
    MPI_Status status{};
    const bool asked_ok = PMPI_Request_get_status(request, &flag, &status) == MPI_SUCCESS;
    if (!asked_ok || !flag || !arrived_whole(*op->incoming(), status)) {
      transfer::requests().put_back(request, std::move(op));
      gone[e] = flag ? 1 : 0;  // complete but not whole: its own completion call unpacks it
      continue;
    }
    gone[e] = 1;
    arrived.push_back({request, std::move(op), status});
  }
  std::size_t kept = 0;
  for (std::size_t e = 0; e < n.receives.size(); ++e) {
    if (!gone[e]) n.receives[kept++] = n.receives[e];
  }
  n.receives.resize(kept);
  n.size.store(kept, std::memory_order_relaxed);
  return arrived;
}

void keep_arrivals(std::vector<EarlyArrival>& arrivals) {
  for (EarlyArrival& a : arrivals) {
    transfer::requests().put_back(a.request, std::move(a.op));
    transfer::counters().receives_early++;
  }
}

}  // namespace strider::calls
