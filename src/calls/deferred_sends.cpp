#include "calls/deferred_sends.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "calls/p2p_operations.hpp"
#include "calls/progress_thread.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "runtime/profile.hpp"
#include "transfer/engine_choice.hpp"
#include "transfer/requests.hpp"
#include "transfer/settings.hpp"
#include "transfer/staged.hpp"
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
  int dest = MPI_PROC_NULL, tag = 0;
  std::unique_ptr<offers::PendingFill> fill;  // an offer taken: `request` is its notice
  int rc = MPI_SUCCESS;  // the flush's error for it: reported when it completes
  bool packed = false;   // packed at the call already (its wire needs the type: see defer_send)
  // The flush did not start `request` (Operation::unstarted); counted in
  // Requests::count_unstarted while its operation lives (an operation is destroyed as soon as a
  // completion call finishes it).
  bool unstarted = false;
  bool operation_alive = false;
};
using DeferredPtr = std::shared_ptr<DeferredSend>;

class DeferredSendOperation final : public transfer::Operation {
 public:
  explicit DeferredSendOperation(DeferredPtr send) : send_(std::move(send)) {
    send_->operation_alive = true;
  }
  ~DeferredSendOperation() override {
    if (send_->unstarted) transfer::requests().count_unstarted(-1);
    send_->operation_alive = false;
  }
  int complete(MPI_Status&, int) override { return send_->rc; }
  bool unstarted() const override { return send_->unstarted; }
  // A started persistent send: the MPI leaves it live, inactive, and so does a failed pack,
  // which never started it (an inactive request completes at once).
  bool persistent() const override { return true; }
  bool one_shot() const override { return true; }
  // A notice: its data is in the receiver's memory, and the offered receive waits for it (as
  // NoticeOperation).
  bool may_cancel() override { return !send_->fill; }
  bool numbered_send() const override { return true; }

 private:
  DeferredPtr send_;
};

struct Queue {
  // Held across a whole flush, so that no thread's call starts beside it (B7); recursive, for an
  // error handler that calls the MPI.
  std::recursive_mutex flushing;
  std::mutex mutex;
  std::vector<DeferredPtr> sends;
  std::int64_t bytes = 0;
  // Sends queued or being flushed: set when one is queued, cleared only once no send is queued
  // and every one a flush took is started. A thread that reads it clear has had every send it
  // posted started, whichever thread flushed them (MPI_THREAD_MULTIPLE: its next call must not
  // overtake them, nor complete one not yet started).
  std::atomic<bool> pending{false};
  // While the progress thread runs: the last post's end (steady clock, ns) and current GPU are
  // kept, and below MPI_THREAD_MULTIPLE the posting turns are taken (takes_turns, PostingTurn).
  std::atomic<bool> thread_on{false};
  std::atomic<std::int64_t> last_post{0};
  std::atomic<int> device{-1};
  // The error reports of the progress thread's flushes, for the application's next call.
  std::mutex due_mutex;
  std::vector<transfer::HeldError> due;
  std::atomic<bool> any_due{false};
};

Queue& queue() {
  static Queue* q = new Queue;  // outlives static destruction at exit
  return *q;
}

// Whether posting calls take turns with the progress thread: while it runs, below
// MPI_THREAD_MULTIPLE, where it may call the MPI only between the application's calls.
bool takes_turns(const Queue& q) {
  return q.thread_on.load(std::memory_order_relaxed) && transfer::requests().single_caller();
}

// The interposed calls this thread is inside (EntryCall, PostingTurn; on the progress thread,
// its flush): more than one while a callback the MPI runs inside a call calls the MPI again.
thread_local int calls_inside = 0;
// Whether this thread is flushing: a call the MPI makes back into Strider from inside the
// flush's MPI_Start (an error handler of the MPI's own) must not start a flush of its own, which
// would start sends queued since before the outer flush's and clear `pending` under it.
thread_local bool flushing_here = false;

// Marks this thread as flushing while it lives.
class FlushingHere {
 public:
  FlushingHere() { flushing_here = true; }
  ~FlushingHere() { flushing_here = false; }
  FlushingHere(const FlushingHere&) = delete;
  FlushingHere& operator=(const FlushingHere&) = delete;
};

// The error handlers of the reports the progress thread's flushes kept, called on the
// application's thread at its next MPI call (one load where there are none).
void call_due_error_handlers() {
  Queue& q = queue();
  if (!q.any_due.load(std::memory_order_acquire)) return;
  std::vector<transfer::HeldError> due;
  {
    std::lock_guard lock(q.due_mutex);
    due.swap(q.due);
    q.any_due.store(false, std::memory_order_release);
  }
  transfer::call_error_handlers(due);
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The flush leaves the application's request inactive: its completion comes from Strider in the
// calls that skip inactive requests (Waitany, Testany, Waitsome, Testsome).
void leave_unstarted(DeferredSend& s) {
  if (s.unstarted || !s.operation_alive) return;
  s.unstarted = true;
  transfer::requests().count_unstarted(1);
}

// STRIDER_TEST_FAIL_DEFERRED=N: whether this deferred send is an Nth, made to fail.
bool fail_on_purpose() {
  static std::atomic<std::int64_t> seen{0};
  const int every = transfer::settings().test_fail_deferred;
  return every > 0 && (seen.fetch_add(1, std::memory_order_relaxed) + 1) % every == 0;
}

// The receiver withdrew the offer: the data goes by the MPI under a request of Strider's own,
// which completes in the background (the application's, never started, completes at once).
int send_as_data(DeferredSend& s) {
  transfer::Outgoing out;
  int rc = transfer::pack_outgoing(s.object, {s.comm, s.dest}, out);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Request r = MPI_REQUEST_NULL;
  rc = PMPI_Isend(out.wire.data(), out.shape.count, out.shape.type, s.dest, s.tag, s.comm, &r);
  if (rc == MPI_SUCCESS) {
    transfer::requests().orphan(r, std::make_unique<SendOperation>(std::move(out)));
  }
  return rc;
}

// Packs the sends into their wires (one kernel for those a GPU wave takes), writes the offers
// taken (one kernel for those on one GPU), then starts them in order.
void pack_and_start(std::vector<DeferredPtr>& sends) {
  std::vector<transfer::Outbound> outbound;
  std::vector<DeferredSend*> wired;
  std::vector<offers::PendingFill*> fills;
  for (const DeferredPtr& s : sends) {
    if (s->fill) {
      fills.push_back(s->fill.get());
    } else if (!s->packed) {
      outbound.push_back({&s->object, &s->out, s->comm});
      wired.push_back(s.get());
    }
  }
  std::vector<int> packed;
  std::vector<char> kept;
  {
    const runtime::Timed timed(runtime::Phase::FlushPack);
    transfer::pack_wave(outbound, packed);
    for (std::size_t k = 0; k < wired.size(); ++k) {
      DeferredSend& s = *wired[k];
      s.rc = packed[k];
      if (s.rc == MPI_SUCCESS && fail_on_purpose()) {
        s.rc = transfer::report_error(s.comm, "deferred send",
                                      "failed on purpose (STRIDER_TEST_FAIL_DEFERRED)");
      }
    }
  }
  if (!fills.empty()) {
    const runtime::Timed timed(runtime::Phase::FlushFill);
    offers::fill_pending(fills, kept);
  }
  const runtime::Timed timed(runtime::Phase::FlushStart);
  std::size_t next_fill = 0;
  for (const DeferredPtr& s : sends) {
    if (s->fill) {
      // As offers::take: a failed write still sends its notice (the receiver waits for it).
      s->rc = s->fill->rc;
      if (!kept[next_fill++]) {
        s->rc = s->numbered.sent(send_as_data(*s));
        leave_unstarted(*s);
      } else {
        const int notice = PMPI_Start(&s->request);
        if (notice != MPI_SUCCESS) leave_unstarted(*s);
        s->rc = s->rc != MPI_SUCCESS ? s->rc : s->numbered.sent(notice);
      }
      continue;
    }
    // A send that was not packed is not started: its stream is not trusted again, as for any
    // send that failed.
    const int start = s->rc == MPI_SUCCESS ? PMPI_Start(&s->request) : s->rc;
    if (start != MPI_SUCCESS) leave_unstarted(*s);
    s->rc = s->numbered.sent(start);
  }
}

// Packs and starts the queued sends (flush_deferred_sends), with the error handlers held until
// every one is started: a handler may send, and its send must not overtake them. Then, on the
// progress thread (`on_thread`), the reports wait for the application's next call; otherwise
// their handlers are called now.
void flush(bool on_thread) {
  Queue& q = queue();
  if (flushing_here) return;
  std::vector<transfer::HeldError> errors;
  {
    std::lock_guard flushing(q.flushing);
    const FlushingHere here;
    std::vector<DeferredPtr> sends;
    {
      std::lock_guard lock(q.mutex);
      sends.swap(q.sends);
      q.bytes = 0;
      if (sends.empty()) q.pending.store(false, std::memory_order_release);
    }
    if (sends.empty()) return;
    const runtime::Timed timed(runtime::Phase::Flush);
    transfer::counters().deferred_flushes++;
    transfer::HeldErrorHandlers held;
    pack_and_start(sends);
    {
      // Every send taken is started: clear unless another thread queued one meanwhile.
      std::lock_guard lock(q.mutex);
      q.pending.store(!q.sends.empty(), std::memory_order_release);
    }
    errors = held.take();
    if (on_thread && !errors.empty()) {
      // Before the lock is released: a call of the application's waits for this flush, then
      // finds them due.
      std::lock_guard lock(q.due_mutex);
      q.due.insert(q.due.end(), errors.begin(), errors.end());
      q.any_due.store(true, std::memory_order_release);
      return;
    }
  }
  transfer::call_error_handlers(errors);
}

// Tracks the send under its request and queues it; flushes at a cap.
void enqueue(DeferredPtr send, std::int64_t bytes, MPI_Request* request) {
  *request = send->request;
  const bool gpu = send->object.gpu;
  transfer::requests().track(*request, std::make_unique<DeferredSendOperation>(send));
  transfer::counters().sends_deferred++;
  Queue& q = queue();
  const bool thread_on = q.thread_on.load(std::memory_order_relaxed);
  if (thread_on) {
    // Before the send is seen queued: under MPI_THREAD_MULTIPLE no posting turn keeps the thread
    // from flushing meanwhile, and a stale post date would have it flush a burst's first send
    // alone. Only a GPU send names a GPU: a host send's flush must not make a CUDA context.
    q.last_post.store(now_ns(), std::memory_order_relaxed);
    if (gpu) q.device.store(engine::cuda::current_device(), std::memory_order_relaxed);
  }
  bool full = false;
  {
    std::lock_guard lock(q.mutex);
    q.bytes += bytes;
    q.sends.push_back(std::move(send));
    full = q.sends.size() >= BurstPolicy::kMaxSends || q.bytes >= BurstPolicy::kMaxBytes;
    q.pending.store(true, std::memory_order_release);
  }
  if (thread_on) progress_posted();
  if (full) flush_deferred_sends();
}

// A deferred send's own part: the object without its type (the application may free it before
// the flush; the plan is Strider's), its peer and number.
DeferredPtr deferred(const transfer::Object& object, const transfer::Peer& peer, int dest, int tag,
                     const offers::NumberedSend& numbered) {
  auto send = std::make_shared<DeferredSend>();
  send->object = object;
  send->object.type = MPI_DATATYPE_NULL;
  send->comm = peer.comm;
  send->dest = dest;
  send->tag = tag;
  send->numbered = numbered;
  return send;
}

}  // namespace

bool may_defer(const transfer::Object& object) {
  if (!STRIDER_HAVE_FLUSH_WRAPPERS || !transfer::settings().bursts || object.oversized ||
      !object.plan->supported || calls_inside > 1) {
    return false;
  }
  // Under MPI_THREAD_MULTIPLE only while the progress thread runs: another thread of the
  // application may block in an MPI call it entered before the send was queued, waiting for a
  // message that needs this one, while this thread waits for it without calling the MPI (B7).
  if (!transfer::requests().single_caller() && !queue().thread_on.load(std::memory_order_relaxed)) {
    return false;
  }
  return object.gpu ? transfer::gpu_engine_serves(*object.plan)
                    : transfer::settings().host_engine != runtime::HostEngine::Off;
}

int defer_send(SendInit init, const transfer::Object& object, const transfer::Peer& peer, int dest,
               int tag, const offers::NumberedSend& numbered, MPI_Request* request) {
  DeferredPtr send = deferred(object, peer, dest, tag, numbered);
  int rc = transfer::prepare_outgoing(send->object, peer, send->out);
  if (rc != MPI_SUCCESS) return numbered.sent(rc);
  // A wire the kernels cannot reach (staged through scratch) may need the MPI's pack, hence the
  // application's type, which may be freed before the flush: packed now, started later.
  if (!transfer::moves_without_type(object, send->out.method)) {
    rc = transfer::pack_prepared(object, send->out, peer.comm);
    if (rc != MPI_SUCCESS) return numbered.sent(rc);
    send->packed = true;
  }
  {
    const runtime::Timed timed(runtime::Phase::SendInit);
    rc = init(send->out.wire.data(), send->out.shape.count, send->out.shape.type, dest, tag,
              peer.comm, &send->request);
  }
  if (rc != MPI_SUCCESS) return numbered.sent(rc);  // `send` releases its wire
  enqueue(std::move(send), object.bytes(), request);
  return MPI_SUCCESS;
}

bool defer_offered_send(SendInit init, const transfer::Object& object, const transfer::Peer& peer,
                        int dest, int tag, const offers::NumberedSend& numbered,
                        MPI_Request* request, int& rc) {
  // Claimed into a spare: most sends of a burst find no offer, and then allocate nothing here (a
  // fill is a few KiB, with the offer's layout).
  static thread_local std::unique_ptr<offers::PendingFill> spare;
  if (!spare) spare = std::make_unique<offers::PendingFill>();
  if (!offers::claim_pending(object, peer.comm, dest, tag, *numbered.index, *spare, true)) {
    if (spare->object.plan) spare.reset();  // touched on the way: not reused as it is
    return false;
  }
  DeferredPtr send = deferred(object, peer, dest, tag, numbered);
  send->fill = std::move(spare);
  send->fill->object = send->object;  // without the type, which the application may free
  {
    const runtime::Timed timed(runtime::Phase::SendInit);
    rc = init(offers::notice_buffer(), offers::kNoticeCount, offers::notice_type(), dest, tag,
              peer.comm, &send->request);
  }
  if (rc != MPI_SUCCESS) {
    offers::drop_pending(*send->fill);
    rc = numbered.sent(rc);
    return true;
  }
  enqueue(std::move(send), object.bytes(), request);
  return true;
}

bool deferral_built() { return STRIDER_HAVE_FLUSH_WRAPPERS != 0; }

CallCount::CallCount() { ++calls_inside; }
CallCount::~CallCount() { --calls_inside; }

EntryCall::EntryCall() {
  flush_deferred_sends();  // waits for a flush of the progress thread's under way
  call_due_error_handlers();
}

PostingTurn::PostingTurn() {
  Queue& q = queue();
  if (takes_turns(q)) {
    q.flushing.lock();  // after a flush of the progress thread's under way
    held_ = true;
  }
  call_due_error_handlers();
}

PostingTurn::~PostingTurn() {
  Queue& q = queue();
  if (q.thread_on.load(std::memory_order_relaxed)) {
    q.last_post.store(now_ns(), std::memory_order_relaxed);
  }
  if (held_) q.flushing.unlock();
}

void progress_thread_running(bool on) { queue().thread_on.store(on, std::memory_order_relaxed); }

bool sends_queued() { return queue().pending.load(std::memory_order_seq_cst); }

std::chrono::nanoseconds flush_if_quiet(std::chrono::nanoseconds quiet) {
  using std::chrono::nanoseconds;
  Queue& q = queue();
  if (!q.pending.load(std::memory_order_acquire)) return nanoseconds(0);
  // How long until a quiet spell since the last post ends (zero or less: it has).
  const auto due = [&q, quiet] {
    return quiet - nanoseconds(now_ns() - q.last_post.load(std::memory_order_relaxed));
  };
  if (const nanoseconds left = due(); left.count() > 0) return left;
  // Held by a call of the application's that is posting: not quiet after all.
  std::unique_lock turn(q.flushing, std::try_to_lock);
  if (!turn.owns_lock()) return quiet;
  if (!q.pending.load(std::memory_order_acquire)) return nanoseconds(0);
  if (const nanoseconds left = due(); left.count() > 0) return left;  // posted since
  const int device = q.device.load(std::memory_order_relaxed);
  if (device >= 0) engine::cuda::set_current_device(device);
  transfer::counters().progress_flushes++;
  const CallCount count;  // a send from a handler the MPI runs on this thread is not deferred
  flush(true);
  return nanoseconds(0);
}

void flush_deferred_sends() {
  Queue& q = queue();
  // A flush under way (`pending` still set) is waited for. While the progress thread takes turns,
  // the lock is taken even with nothing pending: the caller must not call the MPI beside its
  // flush (below MPI_THREAD_MULTIPLE).
  if (!q.pending.load(std::memory_order_acquire) && !takes_turns(q)) {
    return;
  }
  flush(false);
}

}  // namespace strider::calls
