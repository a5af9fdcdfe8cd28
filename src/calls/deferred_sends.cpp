#include "calls/deferred_sends.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "transfer/engine_choice.hpp"
#include "transfer/requests.hpp"
#include "transfer/settings.hpp"
#include "transfer/state.hpp"

#ifndef STRIDER_HAVE_FLUSH_WRAPPERS
#define STRIDER_HAVE_FLUSH_WRAPPERS 0
#endif

namespace strider::calls {
namespace {

// One queued send, shared by the queue (until the flush) and the operation under its request
// (until its completion, which releases the wire).
struct DeferredSend {
  transfer::Object object;  // its type not kept: the plan is Strider's
  transfer::Outgoing out;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;  // the MPI's persistent send (the application's)
  offers::NumberedSend numbered;
  int rc = MPI_SUCCESS;  // the flush's error for it: reported when it completes
};
using DeferredPtr = std::shared_ptr<DeferredSend>;

class DeferredSendOperation final : public transfer::Operation {
 public:
  explicit DeferredSendOperation(DeferredPtr send) : send_(std::move(send)) {}
  int complete(MPI_Status&, int) override { return send_->rc; }
  // A started persistent send: the MPI leaves it live, inactive, and so does a failed pack,
  // which never started it (an inactive request completes at once).
  bool persistent() const override { return true; }
  bool one_shot() const override { return true; }

 private:
  DeferredPtr send_;
};

struct Queue {
  std::mutex mutex;
  std::vector<DeferredPtr> sends;
  std::int64_t bytes = 0;
  std::atomic<bool> pending{false};
};

Queue& queue() {
  static Queue* q = new Queue;  // outlives static destruction at exit
  return *q;
}

// Packs the sends (one kernel for those a GPU wave takes) and starts them in order.
void pack_and_start(std::vector<DeferredPtr>& sends) {
  std::vector<transfer::Outbound> outbound;
  outbound.reserve(sends.size());
  for (const DeferredPtr& s : sends) outbound.push_back({&s->object, &s->out, s->comm});
  std::vector<char> packed;
  transfer::pack_wave(outbound, packed);
  for (std::size_t k = 0; k < sends.size(); ++k) {
    if (!packed[k])
      sends[k]->rc = transfer::pack_prepared(sends[k]->object, sends[k]->out, sends[k]->comm);
  }
  for (const DeferredPtr& s : sends) {
    // A send that was not packed is not started: its stream is not trusted again, as for any
    // send that failed.
    s->rc = s->numbered.sent(s->rc == MPI_SUCCESS ? PMPI_Start(&s->request) : s->rc);
  }
}

}  // namespace

bool may_defer(const transfer::Object& object) {
  if (!STRIDER_HAVE_FLUSH_WRAPPERS || !transfer::settings().bursts || object.oversized ||
      !object.plan->supported || !transfer::requests().single_caller()) {
    return false;
  }
  return object.gpu ? transfer::gpu_engine_serves(*object.plan)
                    : transfer::settings().host_engine != runtime::HostEngine::Off;
}

int defer_send(SendInit init, const transfer::Object& object, const transfer::Peer& peer, int dest,
               int tag, const offers::NumberedSend& numbered, MPI_Request* request) {
  auto send = std::make_shared<DeferredSend>();
  send->object = object;
  send->object.type = MPI_DATATYPE_NULL;  // may be freed before the flush; not needed
  send->comm = peer.comm;
  send->numbered = numbered;
  int rc = transfer::prepare_outgoing(send->object, peer, send->out);
  if (rc != MPI_SUCCESS) return numbered.sent(rc);
  rc = init(send->out.wire.data(), send->out.shape.count, send->out.shape.type, dest, tag,
            peer.comm, &send->request);
  if (rc != MPI_SUCCESS) return numbered.sent(rc);  // `send` releases its wire
  *request = send->request;
  transfer::requests().track(*request, std::make_unique<DeferredSendOperation>(send));
  transfer::counters().sends_deferred++;
  Queue& q = queue();
  bool full = false;
  {
    std::lock_guard lock(q.mutex);
    q.bytes += object.bytes();
    q.sends.push_back(std::move(send));
    full = q.sends.size() >= BurstPolicy::kMaxSends || q.bytes >= BurstPolicy::kMaxBytes;
    q.pending.store(true, std::memory_order_release);
  }
  if (full) flush_deferred_sends();
  return MPI_SUCCESS;
}

void flush_deferred_sends() {
  Queue& q = queue();
  if (!q.pending.load(std::memory_order_acquire)) return;
  std::vector<DeferredPtr> sends;
  {
    std::lock_guard lock(q.mutex);
    sends.swap(q.sends);
    q.bytes = 0;
    q.pending.store(false, std::memory_order_release);
  }
  if (sends.empty()) return;
  transfer::counters().deferred_flushes++;
  pack_and_start(sends);
}

}  // namespace strider::calls
