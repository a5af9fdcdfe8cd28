// The ledgers of the same-node offers (docs/same-node-p2p.md): a receive is offered an index
// only when no other pending operation could match its stream, and the index is the number of
// the stream's messages matched so far. Checked against a model of MPI matching on random
// schedules: every offered index must be the one the MPI's matching would give that receive.
#include <gtest/gtest.h>
#include <mpi.h>

#include <deque>
#include <map>
#include <random>
#include <vector>

#include "offers/ledger.hpp"

namespace strider::offers {
namespace {

TEST(OffersLedger, SendIndicesCountPerStreamAndPoison) {
  SendLedger s;
  EXPECT_EQ(s.next(1, 5), 0u);
  EXPECT_EQ(s.next(1, 5), 1u);
  EXPECT_EQ(s.next(1, 6), 0u);
  EXPECT_EQ(s.next(2, 5), 0u);
  s.poison(1, 5);
  EXPECT_FALSE(s.next(1, 5).has_value());
  EXPECT_EQ(s.next(1, 6), 1u);
  s.poison_all();
  EXPECT_FALSE(s.next(2, 5).has_value());
}

TEST(OffersLedger, ASenderExpectsAnOfferWhereTheReceiverHasBeenOffering) {
  SendLedger s;
  EXPECT_FALSE(s.expects_offer(1, 5, 2));  // a stream's first send never waits
  s.note_offer(1, 5, false, 2, false);     // none found; the tally was 2
  EXPECT_FALSE(s.expects_offer(1, 5, 2));  // no new offer since
  EXPECT_TRUE(s.expects_offer(1, 5, 3));   // one since (it came too late for that send)
  s.note_offer(1, 5, true, 3, true);       // found one by waiting
  EXPECT_TRUE(s.expects_offer(1, 5, 3));   // the receiver keeps offering
  EXPECT_FALSE(s.expects_offer(1, 6, 3));  // another stream
  EXPECT_FALSE(s.expects_offer(2, 5, 3));
}

// The board is searched unless the stream's last send found no offer and the receiver made none
// in the stream's bucket since (a receiver that stopped offering on it).
TEST(OffersLedger, NoNewOfferOnlyWhereTheLastSendFoundNoneAndTheTallyStayed) {
  SendLedger s;
  EXPECT_FALSE(s.no_new_offer(1, 5, 2));  // a stream's first send searches
  s.note_offer(1, 5, false, 2, false);
  EXPECT_TRUE(s.no_new_offer(1, 5, 2));
  EXPECT_FALSE(s.no_new_offer(1, 5, 3));  // an offer made since
  EXPECT_FALSE(s.no_new_offer(1, 6, 2));  // another stream
  s.note_offer(1, 5, true, 3, false);     // found one
  EXPECT_FALSE(s.no_new_offer(1, 5, 3));  // the receiver offers: search for the next
}

// A receiver that always posts after the sends still makes (late) offers: the sender's waits
// find nothing, and it backs off to every 2nd, 4th, ... 64th send; one offer found resets it.
TEST(OffersLedger, FruitlessWaitsBackOff) {
  SendLedger s;
  std::uint64_t tally = 1;
  s.note_offer(0, 0, false, tally, false);
  std::vector<int> waited_at;
  for (int send = 0; send < 300; ++send) {
    ++tally;  // the receiver's late offer for the last message
    const bool wait = s.expects_offer(0, 0, tally);
    if (wait) waited_at.push_back(send);
    s.note_offer(0, 0, false, tally, wait);
  }
  ASSERT_GE(waited_at.size(), 8u);
  EXPECT_EQ(waited_at[0], 0);
  EXPECT_EQ(waited_at[1], 2);  // after 1 fruitless wait: every 2nd send
  EXPECT_EQ(waited_at[2], 6);  // after 2: every 4th
  for (std::size_t k = 7; k < waited_at.size(); ++k) {
    EXPECT_EQ(waited_at[k] - waited_at[k - 1], 64);  // capped
  }
  ++tally;
  s.note_offer(0, 0, true, tally, true);  // an offer found: waiting again at once
  EXPECT_TRUE(s.expects_offer(0, 0, tally));
}

TEST(OffersLedger, WildcardsAndPendingReceivesBlockOffers) {
  ReceiveLedger r;
  EXPECT_EQ(r.offer_index(1, 3), 0u);
  EXPECT_FALSE(r.offer_index(MPI_ANY_SOURCE, 3).has_value());
  EXPECT_FALSE(r.offer_index(1, MPI_ANY_TAG).has_value());
  const auto any_source = r.post(MPI_ANY_SOURCE, 3);
  EXPECT_FALSE(r.offer_index(1, 3).has_value());
  EXPECT_EQ(r.offer_index(1, 4), 0u);  // another tag: the wildcard cannot take it
  r.matched(any_source, 2, 3);
  EXPECT_EQ(r.offer_index(1, 3), 0u);
  EXPECT_EQ(r.offer_index(2, 3), 1u);
  const auto same = r.post(2, 3);
  EXPECT_FALSE(r.offer_index(2, 3).has_value());  // one pending receive of the stream already
  r.unmatched(same);                              // cancelled
  EXPECT_EQ(r.offer_index(2, 3), 1u);
  const auto any_tag = r.post(2, MPI_ANY_TAG);
  EXPECT_FALSE(r.offer_index(2, 9).has_value());
  EXPECT_EQ(r.offer_index(1, 9), 0u);
  r.lost(any_tag);
  EXPECT_TRUE(r.poisoned());
  EXPECT_FALSE(r.offer_index(1, 9).has_value());
}

// offer_index skips its scan of the pending receives where its counting filter says none can
// match: checked against a scan of a model on random posts (named on few streams so that
// buckets are shared, and wildcards) and completions.
TEST(OffersLedger, PendingFilterAgreesWithAScanOnRandomSchedules) {
  std::mt19937 rng(271828);
  ReceiveLedger ledger;
  struct Posted {
    ReceiveLedger::Ticket ticket;
    int source, tag;
  };
  std::vector<Posted> pending;
  for (int step = 0; step < 20000; ++step) {
    const int action = static_cast<int>(rng() % 10);
    if (action < 5 || pending.empty()) {
      int source = static_cast<int>(rng() % 6), tag = static_cast<int>(rng() % 2000);
      if (rng() % 20 == 0) source = MPI_ANY_SOURCE;
      if (rng() % 20 == 0) tag = MPI_ANY_TAG;
      pending.push_back({ledger.post(source, tag), source, tag});
    } else {
      const std::size_t i = rng() % pending.size();
      ledger.unmatched(pending[i].ticket);  // nothing matched: the streams' counts stay 0
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    }
    const int source = static_cast<int>(rng() % 6), tag = static_cast<int>(rng() % 2000);
    bool blocked = false;
    for (const Posted& p : pending) {
      blocked |= (p.source == MPI_ANY_SOURCE || p.source == source) &&
                 (p.tag == MPI_ANY_TAG || p.tag == tag);
    }
    ASSERT_EQ(ledger.offer_index(source, tag).has_value(), !blocked) << "step " << step;
    ASSERT_EQ(ledger.pending(), pending.size());
  }
}

// A model of MPI matching for one receiver: messages from senders 0..S-1 with tags 0..T-1 arrive
// in per-sender order; receives (some wildcards) are posted and matched in MPI order; some are
// cancelled before they match. Every receive the ledger offers must get the message of that
// index on its stream.
TEST(OffersLedger, OfferedIndexIsTheMatchedMessageOnRandomSchedules) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 300; ++round) {
    ReceiveLedger ledger;
    constexpr int kSenders = 3, kTags = 3;
    std::map<std::pair<int, int>, std::uint64_t> sent;  // next index per stream
    struct Message {
      int source, tag;
      std::uint64_t index;
    };
    std::deque<Message> unexpected;  // arrived, unmatched, in arrival order
    struct Posted {
      ReceiveLedger::Ticket ticket;
      int source, tag;
      std::optional<std::uint64_t> offered;
    };
    std::deque<Posted> posted;  // pending receives, posting order
    const auto matches = [](const Posted& p, const Message& m) {
      return (p.source == MPI_ANY_SOURCE || p.source == m.source) &&
             (p.tag == MPI_ANY_TAG || p.tag == m.tag);
    };
    const auto complete = [&](const Posted& p, const Message& m) {
      if (p.offered) {
        ASSERT_EQ(m.source, p.source);
        ASSERT_EQ(m.tag, p.tag);
        ASSERT_EQ(m.index, *p.offered) << "round " << round;
      }
      ledger.matched(p.ticket, m.source, m.tag);
    };
    for (int step = 0; step < 60; ++step) {
      const int action = static_cast<int>(rng() % 4);
      if (action == 0) {  // a message arrives: the first posted receive that matches takes it
        const int s = static_cast<int>(rng() % kSenders), t = static_cast<int>(rng() % kTags);
        Message m{s, t, sent[{s, t}]++};
        auto it = std::find_if(posted.begin(), posted.end(),
                               [&](const Posted& p) { return matches(p, m); });
        if (it == posted.end()) {
          unexpected.push_back(m);
        } else {
          complete(*it, m);
          posted.erase(it);
        }
      } else if (action == 1 || action == 2) {  // a receive is posted
        const bool wild = rng() % 4 == 0;
        const int s = wild && rng() % 2 ? MPI_ANY_SOURCE : static_cast<int>(rng() % kSenders);
        const int t = wild && s != MPI_ANY_SOURCE ? MPI_ANY_TAG : static_cast<int>(rng() % kTags);
        Posted p{0, s, t, ledger.offer_index(s, t)};
        p.ticket = ledger.post(s, t);
        auto it = std::find_if(unexpected.begin(), unexpected.end(),
                               [&](const Message& m) { return matches(p, m); });
        if (it != unexpected.end()) {
          complete(p, *it);
          unexpected.erase(it);
        } else {
          posted.push_back(p);
        }
      } else if (!posted.empty()) {  // a pending receive is cancelled
        const std::size_t i = rng() % posted.size();
        ledger.unmatched(posted[i].ticket);
        posted.erase(posted.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }
}

}  // namespace
}  // namespace strider::offers
