#include "offers/ledger.hpp"

#include <mpi.h>

#include <algorithm>

namespace strider::offers {

std::optional<std::uint64_t> SendLedger::next(int dest, int tag) {
  auto& stream = streams_.touch(dest, tag);
  const std::uint64_t index = stream.state.sent++;
  if (all_poisoned_ || stream.state.poisoned || stream.forgotten) return std::nullopt;
  return index;
}

void SendLedger::poison(int dest, int tag) { streams_.touch(dest, tag).state.poisoned = true; }

bool SendLedger::expects_offer(int dest, int tag, std::uint64_t tally) const {
  const auto* stream = streams_.find(dest, tag);
  if (stream == nullptr) return false;
  const Stream& s = stream->state;
  if (!s.offered && s.tally == tally) return false;
  constexpr unsigned kMaxBackoff = 6;  // every 64th send at most
  return s.fruitless == 0 || s.skipped + 1 >= (1u << std::min(s.fruitless, kMaxBackoff));
}

bool SendLedger::no_new_offer(int dest, int tag, std::uint64_t tally) const {
  const auto* stream = streams_.find(dest, tag);
  return stream != nullptr && !stream->state.offered && stream->state.tally == tally;
}

void SendLedger::note_offer(int dest, int tag, bool offered, std::uint64_t tally, bool waited) {
  Stream& s = streams_.touch(dest, tag).state;
  s.offered = offered;
  s.tally = tally;
  if (offered) {
    s.fruitless = 0;
    s.skipped = 0;
  } else if (waited) {
    ++s.fruitless;
    s.skipped = 0;
  } else {
    ++s.skipped;
  }
}

std::size_t ReceiveLedger::pending_bucket(int source, int tag) {
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(source)) << 32) |
                            static_cast<std::uint32_t>(tag);
  static_assert(kPendingBuckets == 512);  // the top 9 bits of a Fibonacci hash
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 55);
}

std::optional<std::uint64_t> ReceiveLedger::offer_index(int source, int tag) const {
  if (poisoned_ || !names_stream(source, tag)) return std::nullopt;  // wildcards and PROC_NULL
  if (wildcards_pending_ != 0 || named_pending_[pending_bucket(source, tag)] != 0) {
    for (const Pending& p : pending_) {
      if (!p.live) continue;
      const bool source_matches = p.source == MPI_ANY_SOURCE || p.source == source;
      const bool tag_matches = p.tag == MPI_ANY_TAG || p.tag == tag;
      if (source_matches && tag_matches) return std::nullopt;
    }
  }
  if (const auto* stream = matched_.find(source, tag)) {
    if (stream->forgotten) return std::nullopt;  // restarted, too low: never taken
    return stream->state;
  }
  if (matched_.may_have_forgotten(source, tag)) return std::nullopt;  // the same
  return 0;
}

ReceiveLedger::Ticket ReceiveLedger::post(int source, int tag) {
  const Ticket t = next_ticket_++;
  pending_.push_back({t, source, tag});
  ++live_;
  // MPI_PROC_NULL, which matches nothing, is counted with the wildcards: it only costs a scan.
  if (names_stream(source, tag)) {
    ++named_pending_[pending_bucket(source, tag)];
  } else {
    ++wildcards_pending_;
  }
  return t;
}

void ReceiveLedger::erase(Ticket ticket) {
  const auto it = std::lower_bound(pending_.begin(), pending_.end(), ticket,
                                   [](const Pending& p, Ticket t) { return p.ticket < t; });
  if (it == pending_.end() || it->ticket != ticket || !it->live) return;
  if (names_stream(it->source, it->tag)) {
    --named_pending_[pending_bucket(it->source, it->tag)];
  } else {
    --wildcards_pending_;
  }
  it->live = false;
  --live_;
  // Done entries go once they are half the vector, wherever they are (a receive that stays
  // pending for the whole run must not keep every later one's entry).
  if (pending_.size() - live_ > pending_.size() / 2) {
    std::erase_if(pending_, [](const Pending& p) { return !p.live; });
  }
}

void ReceiveLedger::matched(Ticket ticket, int source, int tag) {
  erase(ticket);
  matched_now(source, tag);
}

void ReceiveLedger::unmatched(Ticket ticket) { erase(ticket); }

void ReceiveLedger::lost(Ticket ticket) {
  erase(ticket);
  poisoned_ = true;
}

void ReceiveLedger::matched_now(int source, int tag) {
  if (!names_stream(source, tag)) {  // MPI_PROC_NULL's status: nothing matched
    return;
  }
  matched_.touch(source, tag).state++;
}

}  // namespace strider::offers
