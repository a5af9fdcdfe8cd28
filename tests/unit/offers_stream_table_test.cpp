// The offers' bounded per-stream tables (offers/stream_table.hpp) and the ledgers over
// them: at most `capacity` streams held, the least recently used forgotten; a forgotten stream
// that comes back is never trusted, and a ledger never gives an index that differs from the
// stream's true count (I2), whatever it forgot.
#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <map>
#include <random>
#include <utility>

#include "offers/ledger.hpp"
#include "offers/stream_table.hpp"

namespace strider::offers {
namespace {

TEST(OffersStreamTable, HoldsAtMostItsCapacityForgettingTheLeastRecentlyUsed) {
  StreamTable<int> t(3);
  t.touch(0, 1).state = 1;
  t.touch(0, 2).state = 2;
  t.touch(0, 3).state = 3;
  t.touch(0, 1);  // now the most recently used
  t.touch(0, 4);  // forgets (0, 2)
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.find(0, 2), nullptr);
  ASSERT_NE(t.find(0, 1), nullptr);
  EXPECT_EQ(t.find(0, 1)->state, 1);
  EXPECT_FALSE(t.find(0, 1)->forgotten);
  EXPECT_TRUE(t.may_have_forgotten(0, 2));
}

TEST(OffersStreamTable, AForgottenStreamComesBackUntrusted) {
  StreamTable<int> t(2);
  t.touch(0, 10);
  t.touch(0, 11);
  t.touch(0, 12);  // forgets (0, 10)
  t.touch(0, 13);  // forgets (0, 11): tags 10 to 11 of peer 0 may have been held
  const auto& back = t.touch(0, 10);
  EXPECT_TRUE(back.forgotten);
  EXPECT_EQ(back.state, 0);
  // Outside the forgotten range, or another peer: certainly new.
  EXPECT_FALSE(t.touch(0, 14).forgotten);
  EXPECT_FALSE(t.touch(0, 9).forgotten);
  EXPECT_FALSE(t.touch(1, 10).forgotten);
}

TEST(OffersStreamTable, TalliesHeldAndForgottenStreams) {
  const StreamTally before = stream_tally();
  {
    StreamTable<int> t(4);
    for (int tag = 0; tag < 10; ++tag) t.touch(0, tag);
    const StreamTally during = stream_tally();
    EXPECT_EQ(during.held - before.held, 4u);
    EXPECT_EQ(during.forgotten - before.forgotten, 6u);
  }
  EXPECT_EQ(stream_tally().held, before.held);  // released with the table
}

// A run with a new tag every step: the ledgers stay at their bound, and each new stream is
// trusted (its index from 0).
TEST(OffersStreamTable, ANewTagEveryStepStaysBoundedAndTrusted) {
  SendLedger sends(64);
  ReceiveLedger receives(64);
  for (int tag = 0; tag < 100000; ++tag) {
    ASSERT_EQ(receives.offer_index(1, tag), 0u) << tag;
    receives.matched(receives.post(1, tag), 1, tag);
    ASSERT_EQ(sends.next(1, tag), 0u) << tag;
  }
  EXPECT_EQ(sends.streams(), 64u);
  EXPECT_EQ(receives.streams(), 64u);
  // An old tag, forgotten: neither side trusts it again.
  EXPECT_FALSE(sends.next(1, 5).has_value());
  EXPECT_FALSE(sends.next(1, 5).has_value());
  EXPECT_FALSE(receives.offer_index(1, 5).has_value());
  receives.matched(receives.post(1, 5), 1, 5);
  EXPECT_FALSE(receives.offer_index(1, 5).has_value());
}

// Random streams over few tags and tiny ledgers: whatever either side forgot, an index it gives
// is the stream's true count (the sender's: messages sent before; the receiver's: messages
// matched before), so a sender and receiver that both give one agree.
TEST(OffersStreamTable, AnIndexGivenIsAlwaysTheTrueCount) {
  std::mt19937_64 rng(7);
  SendLedger sends(4);
  ReceiveLedger receives(5);
  std::map<std::pair<int, int>, std::uint64_t> sent, matched;
  long trusted_sends = 0, trusted_offers = 0;
  for (int op = 0; op < 200000; ++op) {
    const int peer = static_cast<int>(rng() % 3);
    // Mostly a few hot tags, sometimes many cold ones (which push the hot ones out).
    const int tag = rng() % 4 != 0 ? static_cast<int>(rng() % 4) : static_cast<int>(rng() % 64);
    if (rng() % 2 == 0) {
      const auto index = sends.next(peer, tag);
      if (index) {
        ++trusted_sends;
        ASSERT_EQ(*index, (sent[{peer, tag}])) << "op " << op;
      }
      ++sent[{peer, tag}];
    } else {
      const auto index = receives.offer_index(peer, tag);
      if (index) {
        ++trusted_offers;
        ASSERT_EQ(*index, (matched[{peer, tag}])) << "op " << op;
      }
      receives.matched(receives.post(peer, tag), peer, tag);
      ++matched[{peer, tag}];
    }
    ASSERT_LE(sends.streams(), 4u);
    ASSERT_LE(receives.streams(), 5u);
  }
  // Not vacuous: new streams were trusted at first.
  EXPECT_GT(trusted_sends, 0);
  EXPECT_GT(trusted_offers, 0);
}

// The table against a plain model (a list in recency order, and the forgotten tag ranges) on
// random touches over many peers and tags, small and large capacities: the same streams held,
// in the same order of forgetting, with the same states and `forgotten` marks.
TEST(OffersStreamTable, MatchesAnLruModelOnRandomTouches) {
  std::mt19937_64 rng(99);
  for (const std::size_t capacity : {1u, 2u, 7u, 64u, 1000u}) {
    StreamTable<int> table(capacity);
    std::list<std::pair<std::pair<int, int>, int>> model;  // most recently used first
    std::map<int, std::pair<int, int>> ranges;
    const auto model_forgot = [&](int peer, int tag) {
      const auto it = ranges.find(peer);
      return it != ranges.end() && tag >= it->second.first && tag <= it->second.second;
    };
    for (int op = 0; op < 60000; ++op) {
      const int peer = static_cast<int>(rng() % 5);
      const int tag = static_cast<int>(rng() % (capacity * 3 + 2));
      const auto it = std::find_if(model.begin(), model.end(), [&](const auto& e) {
        return e.first == std::pair{peer, tag};
      });
      if (rng() % 4 == 0) {  // a look that changes nothing
        const auto* found = table.find(peer, tag);
        ASSERT_EQ(found != nullptr, it != model.end()) << op;
        if (found) ASSERT_EQ(found->state, it->second) << op;
        continue;
      }
      bool forgotten = false;
      if (it != model.end()) {
        model.splice(model.begin(), model, it);
      } else {
        if (model.size() >= capacity) {
          const auto [p, t] = model.back().first;
          auto [r, made] = ranges.try_emplace(p, t, t);
          r->second = {std::min(r->second.first, t), std::max(r->second.second, t)};
          model.pop_back();
        }
        forgotten = model_forgot(peer, tag);
        model.emplace_front(std::pair{peer, tag}, 0);
      }
      auto& entry = table.touch(peer, tag);
      if (it == model.end()) ASSERT_EQ(entry.forgotten, forgotten) << op;
      ASSERT_EQ(entry.state, model.front().second) << op;
      model.front().second = ++entry.state;
      ASSERT_EQ(table.size(), model.size()) << op;
    }
    for (const auto& [stream, count] : model) {
      const auto* found = table.find(stream.first, stream.second);
      ASSERT_NE(found, nullptr);
      EXPECT_EQ(found->state, count);
    }
  }
}

}  // namespace
}  // namespace strider::offers
