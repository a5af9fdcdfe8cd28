// The counts the offer protocol rests on (docs/same-node-p2p.md): a stream is the messages of one
// communicator from one sender to one receiver with one tag, numbered in the order they are sent.
// The send ledger numbers a process's outgoing messages; the receive ledger counts the messages
// its receives matched, per stream, and lists its receive operations still pending, so it can
// tell when a receive is certain to take a given message. Pure logic, one per communicator; the
// caller serializes access (the protocol is off under MPI_THREAD_MULTIPLE). Each holds at most
// kStreamsPerTable streams (stream_table.hpp): a stream it forgot and sees again is
// never trusted again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "offers/stream_table.hpp"

namespace strider::offers {

class SendLedger {
 public:
  explicit SendLedger(std::size_t capacity = kStreamsPerTable) : streams_(capacity) {}

  // Numbers the next message to `dest` with `tag`. Every message sent on the communicator to a
  // peer that offers may be taken from must pass here, in the order the MPI sees them. Nothing
  // when the stream is poisoned (or was forgotten): the index is unknown and no offer may be
  // taken on it.
  std::optional<std::uint64_t> next(int dest, int tag);
  // Messages on the stream that Strider does not see (persistent sends): never trusted again.
  void poison(int dest, int tag);
  // A send may have been cancelled, on any stream.
  void poison_all() { all_poisoned_ = true; }
  // Whether a send on the stream that finds no offer should wait a moment for one: the
  // stream's last send found one, or the receiver made offers in the stream's bucket since
  // (`tally`, NodeBoard::offers_to_me). Its receiver then posts its receives around when this
  // process sends (a halo, a ping-pong), and its next offer may be a moment away. After waits
  // that found nothing (a receiver that posts after the sends), it waits only every 2nd, 4th,
  // ..., at most every 64th time, until an offer is found again. A stream's first send never
  // waits.
  bool expects_offer(int dest, int tag, std::uint64_t tally) const;
  // Whether the board cannot hold an offer for the stream's next message: its last send found
  // none, and the receiver has made no offer in the stream's bucket since (`tally` unchanged).
  // (An offer made before that send for a later message is then missed: that message goes as
  // data, which is always correct.)
  bool no_new_offer(int dest, int tag, std::uint64_t tally) const;
  // What a send on the stream found: an offer or not, with the tally then, and whether it
  // waited for one.
  void note_offer(int dest, int tag, bool offered, std::uint64_t tally, bool waited);

  std::size_t streams() const { return streams_.size(); }

 private:
  struct Stream {
    std::uint64_t sent = 0;
    bool poisoned = false;
    // What its last send found (expects_offer).
    bool offered = false;
    std::uint64_t tally = 0;
    unsigned fruitless = 0;  // waits in a row that found no offer
    unsigned skipped = 0;    // sends since the last of them
  };
  StreamTable<Stream> streams_;
  bool all_poisoned_ = false;
};

class ReceiveLedger {
 public:
  using Ticket = std::uint64_t;

  explicit ReceiveLedger(std::size_t capacity = kStreamsPerTable) : matched_(capacity) {}

  // The index of the stream's message that a receive from `source` with `tag` posted now would
  // match, if that is certain: both named (no wildcard), no other operation that could match the
  // stream pending, ledger not poisoned. Ask before post()ing that receive.
  std::optional<std::uint64_t> offer_index(int source, int tag) const;

  // A receive operation (receive, or blocking matching probe) is posted; MPI_ANY_SOURCE and
  // MPI_ANY_TAG allowed.
  Ticket post(int source, int tag);
  // It completed having matched a message of (source, tag).
  void matched(Ticket ticket, int source, int tag);
  // It completed without matching (cancelled, or failed before matching).
  void unmatched(Ticket ticket);
  // It completed and what it matched is unknown: the counts can no longer be trusted.
  void lost(Ticket ticket);
  // A message matched with no posted operation (MPI_Improbe); also the count of matched().
  void matched_now(int source, int tag);
  // Receives Strider does not see (persistent receives): no offer is ever made again.
  void poison() { poisoned_ = true; }

  std::size_t pending() const { return live_; }
  bool poisoned() const { return poisoned_; }
  std::size_t streams() const { return matched_.size(); }

 private:
  struct Pending {
    Ticket ticket;
    int source, tag;
    bool live = true;
  };
  void erase(Ticket ticket);
  // Whether an operation names one stream (no wildcard, not MPI_PROC_NULL: all negative).
  static bool names_stream(int source, int tag) { return source >= 0 && tag >= 0; }
  // The bucket of named_pending_ that (source, tag) counts in.
  static std::size_t pending_bucket(int source, int tag);

  StreamTable<std::uint64_t> matched_;  // messages matched, per stream
  // In ticket order (tickets only grow), so an operation is found by binary search. One that
  // completes is marked done, not erased: done entries are dropped together once they are half
  // the vector (erasing each at once moved the rest of a burst's receives every time, quadratic
  // in the burst).
  std::vector<Pending> pending_;
  std::size_t live_ = 0;  // entries not done
  // A counting filter over pending_: per bucket of (source, tag), the pending operations that
  // name both, and the wildcard ones apart. offer_index scans pending_ only where either says
  // one may match: a burst of receives on distinct streams is asked about without a scan (it
  // was quadratic in the burst). Counters, not a hash table: nothing is allocated per receive.
  static constexpr std::size_t kPendingBuckets = 512;
  std::vector<std::uint32_t> named_pending_ = std::vector<std::uint32_t>(kPendingBuckets);
  std::uint32_t wildcards_pending_ = 0;
  Ticket next_ticket_ = 1;
  bool poisoned_ = false;
};

}  // namespace strider::offers
