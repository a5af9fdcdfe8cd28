#include "calls/persistent_starts.hpp"

#include <memory>
#include <vector>

#include "calls/p2p_operations.hpp"
#include "offers/protocol.hpp"
#include "runtime/profile.hpp"
#include "transfer/next.hpp"
#include "transfer/requests.hpp"

namespace strider::calls {
namespace {

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
  // A receive whose offer was taken completes normally (as ReceiveOperation).
  bool may_cancel() override { return !p_->receive || offers::may_cancel(p_->in); }
  bool persistent() const override { return true; }
  bool numbered_send() const override { return !p_->receive; }
  transfer::Incoming* incoming() override { return p_->receive ? &p_->in : nullptr; }

 private:
  // Ready for the next start: nothing unpacked yet, no hole closed. The offer, settled, keeps
  // its landing buffer for the next start's (offers::publish).
  void rearm() {
    p_->in.unpacked = false;
    p_->in.unpack_rc = MPI_SUCCESS;
    p_->in.status_bytes = -1;
    p_->in.hole_closed = false;
  }
  PersistentPtr p_;
};

// A send's start that took its receiver's offer: the data is in the receiver's memory already and
// a notice went under a request of Strider's own, so the MPI's request was never started (it is
// inactive: Operation::unstarted). It completes at once, as a standard, buffered or ready send
// may before its receive matches (synchronous sends take no offers), with the write's error if
// it failed. It is never cancelled: the offered receive waits for this very message.
class NoticedStart final : public transfer::Operation {
 public:
  explicit NoticedStart(int rc) : rc_(rc) { transfer::requests().count_unstarted(1); }
  ~NoticedStart() override { transfer::requests().count_unstarted(-1); }
  NoticedStart(const NoticedStart&) = delete;
  NoticedStart& operator=(const NoticedStart&) = delete;
  int complete(MPI_Status&, int) override { return rc_; }
  bool may_cancel() override { return false; }
  bool persistent() const override { return true; }
  bool unstarted() const override { return true; }

 private:
  int rc_;
};

transfer::OperationPtr operation_for_start(const PersistentPtr& p) {
  if (p->collective) return std::make_unique<collective::CollectiveOperation>(p->collective, true);
  return std::make_unique<PersistentStart>(p);
}

// One request started by the MPI (or the tool after Strider), as MPI_Start would be.
int start_one(MPI_Request* request) { return STRIDER_NEXT(MPI_Start)(request); }

// The notice of a start that took an offer: an empty message on the request's envelope, under a
// request of Strider's own that completes in the background (most complete at once).
int send_notice(const PersistentTransfer& p) {
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = STRIDER_NEXT(MPI_Isend)(offers::notice_buffer(), offers::kNoticeCount,
                                   offers::notice_type(), p.peer, p.tag, p.comm, &r);
  if (rc != MPI_SUCCESS) return rc;
  int done = 0;
  rc = PMPI_Test(&r, &done, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS && !done) {
    transfer::requests().orphan(r, std::make_unique<NoticeOperation>());
  }
  return rc;
}

// Claims the receiver's offer for a send's start numbered `numbered`, where there is one
// (`burst`: one of several sends started together, which does not wait for an offer not made
// yet).
bool claim(PersistentTransfer& p, const offers::NumberedSend& numbered, bool burst) {
  if (!numbered.index || p.synchronous) return false;
  if (!p.fill) p.fill = std::make_unique<offers::PendingFill>();
  return offers::claim_pending(p.object, p.comm, p.peer, p.tag, *numbered.index, *p.fill, burst);
}

bool is_send(const PersistentPtr& p) { return p && !p->collective && !p->receive; }
bool is_receive(const PersistentPtr& p) { return p && !p->collective && p->receive; }

// Whether any point-to-point request among `served` is on a communicator with offers.
bool offering(std::span<const PersistentPtr> served) {
  for (const PersistentPtr& p : served) {
    if (p && !p->collective && offers::active(p->comm)) return true;
  }
  return false;
}

// The packed path: no offers among them; the MPI starts all in its own order.
int start_packed(std::span<const PersistentPtr> served, MPI_Request* requests,
                 const std::function<int()>& start) {
  std::vector<transfer::Outbound> sends;
  std::vector<collective::Call*> collectives;
  for (const PersistentPtr& p : served) {
    if (is_send(p)) sends.push_back({&p->object, &p->out, p->comm});
    if (p && p->collective) collectives.push_back(p->collective.get());
  }
  std::vector<int> packed;
  transfer::pack_wave(sends, packed);
  for (const int rc : packed) {
    if (rc != MPI_SUCCESS) return rc;
  }
  for (collective::Call* c : collectives) {
    if (const int rc = collective::load(*c)) return rc;
  }
  const int rc = start();
  if (rc != MPI_SUCCESS) return rc;
  for (std::size_t i = 0; i < served.size(); ++i) {
    if (served[i]) transfer::requests().track(requests[i], operation_for_start(served[i]));
  }
  return MPI_SUCCESS;
}

// The receives among them, in order: counted and planned before the MPI starts each, offered once
// it has (docs/same-node-p2p.md, I3), one default-stream check for all their offers.
void start_receives(std::span<const PersistentPtr> served, MPI_Request* requests,
                    int& first_error) {
  const runtime::Timed timed(runtime::Phase::StartReceives);
  const offers::PublishedTogether together;
  for (std::size_t i = 0; i < served.size(); ++i) {
    const PersistentPtr& p = served[i];
    if (!is_receive(p)) continue;
    const bool offer = offers::plan_offer(p->in, p->peer, p->tag, true);
    const int rc = start_one(&requests[i]);
    if (rc != MPI_SUCCESS) {
      p->in.extras.reset();  // never posted: its count dropped, nothing offered
      if (first_error == MPI_SUCCESS) first_error = rc;
      continue;
    }
    if (offer) offers::publish(p->in);
    transfer::requests().track(requests[i], std::make_unique<PersistentStart>(p));
  }
}

// The offered path (start_served).
int start_offering(std::span<const PersistentPtr> served, MPI_Request* requests) {
  int first_error = MPI_SUCCESS;
  const auto note = [&first_error](int rc) {
    if (first_error == MPI_SUCCESS) first_error = rc;
    return rc;
  };
  start_receives(served, requests, first_error);
  const std::size_t n = served.size();
  std::size_t send_count = 0;
  for (const PersistentPtr& p : served) send_count += is_send(p) ? 1 : 0;
  // The sends numbered in order; those that claim an offer are written together, the others
  // packed together; the collectives loaded.
  std::vector<char> claimed(n, 0);
  std::vector<int> ready(n, MPI_SUCCESS);
  std::vector<offers::NumberedSend> numbered(n);
  std::vector<offers::PendingFill*> fills;
  std::vector<transfer::Outbound> outbound;
  std::vector<std::size_t> outbound_at;
  for (std::size_t i = 0; i < n; ++i) {
    const PersistentPtr& p = served[i];
    if (p && p->collective) {
      ready[i] = collective::load(*p->collective);
    } else if (is_send(p)) {
      numbered[i] = offers::number_send(p->comm, p->peer, p->tag);
      if (claim(*p, numbered[i], send_count > 1)) {
        claimed[i] = 1;
        fills.push_back(p->fill.get());
      } else {
        outbound.push_back({&p->object, &p->out, p->comm});
        outbound_at.push_back(i);
      }
    }
  }
  std::vector<char> kept;
  {
    const runtime::Timed timed(runtime::Phase::StartWrites);
    if (!fills.empty()) {
      const runtime::Timed timed_fills(runtime::Phase::StartFills);
      offers::fill_pending(fills, kept);
    }
    std::vector<int> packed;
    const runtime::Timed timed_packs(runtime::Phase::StartPacks);
    transfer::pack_wave(outbound, packed);
    for (std::size_t k = 0; k < outbound.size(); ++k) ready[outbound_at[k]] = packed[k];
  }
  // Then everything but the receives, in the array's order: a send to a (communicator,
  // destination) is started after the earlier ones to it, notices included (non-overtaking).
  const runtime::Timed timed(runtime::Phase::StartSends);
  std::size_t next_fill = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const PersistentPtr& p = served[i];
    if (is_receive(p)) continue;
    if (!p) {
      note(start_one(&requests[i]));
      continue;
    }
    if (claimed[i]) {
      const offers::PendingFill& f = *p->fill;
      if (kept[next_fill++]) {
        // As offers::take: a failed write still sends its notice (the receiver waits for it).
        const int rc = numbered[i].sent(send_notice(*p));
        transfer::requests().track(
            requests[i], std::make_unique<NoticedStart>(note(f.rc != MPI_SUCCESS ? f.rc : rc)));
        continue;
      }
      // Withdrawn by its receiver meanwhile: the data goes by the MPI.
      ready[i] = transfer::pack_prepared(p->object, p->out, p->comm);
    }
    const int rc = ready[i] != MPI_SUCCESS ? ready[i] : start_one(&requests[i]);
    if (is_send(p)) numbered[i].sent(rc);
    if (note(rc) == MPI_SUCCESS) transfer::requests().track(requests[i], operation_for_start(p));
  }
  return first_error;
}

}  // namespace

int start_served(std::span<const PersistentPtr> served, MPI_Request* requests,
                 const std::function<int()>& start) {
  return offering(served) ? start_offering(served, requests)
                          : start_packed(served, requests, start);
}

}  // namespace strider::calls
