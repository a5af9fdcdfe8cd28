// The offer slots (offers/board.hpp): a taken offer cannot be retracted and a retracted
// one cannot be taken, also when a sender and the receiver race; a slot reused for a new offer
// is never taken through a stale look.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "offers/board.hpp"

namespace strider::offers {
namespace {

constexpr std::uint64_t kComm = 3;

MessageId message(int sender, int tag, std::uint64_t index, std::uint64_t comm = kComm) {
  return MessageId{comm, sender, tag, index};
}

// Slots::take, for tests that do not ask whether an offer was there.
std::optional<Claim> take(Slots& slots, const MessageId& m, std::int64_t bytes) {
  bool offered = false;
  return slots.take(m, bytes, offered);
}

Terms terms(int sender, int tag, std::uint64_t index, std::int64_t capacity) {
  Terms t;
  t.message = message(sender, tag, index);
  t.capacity = capacity;
  t.unit = 4;
  return t;
}

TEST(OffersBoard, TakeFillSettle) {
  std::vector<Slot> memory(4);
  Slots slots(memory.data(), 4);
  const int s = slots.open(terms(1, 7, 3, 64));
  ASSERT_GE(s, 0);
  // Another sender, communicator or message: no offer there at all.
  for (const MessageId& other : {message(2, 7, 3), message(1, 7, 3, kComm + 1), message(1, 7, 2)}) {
    bool offered = true;
    EXPECT_FALSE(slots.take(other, 16, offered).has_value());
    EXPECT_FALSE(offered);
  }
  // Over the capacity, or not whole elements: the offer is there but does not admit them.
  for (const std::int64_t bytes : {68, 6}) {
    bool offered = false;
    EXPECT_FALSE(slots.take(message(1, 7, 3), bytes, offered).has_value());
    EXPECT_TRUE(offered);
  }
  const auto claim = take(slots, message(1, 7, 3), 16);
  ASSERT_TRUE(claim.has_value());
  EXPECT_FALSE(slots.retract(s));
  EXPECT_FALSE(take(slots, message(1, 7, 3), 16).has_value());  // taken once only
  EXPECT_TRUE(Slots::fill(*claim, 16));
  const Outcome o = slots.settle(s);
  EXPECT_EQ(o.phase, Phase::Filled);
  EXPECT_EQ(o.bytes, 16);
  // The slot is free again: four new offers fill the four slots.
  std::vector<int> opened;
  for (std::uint64_t k = 4; k < 8; ++k) opened.push_back(slots.open(terms(1, 7, k, 64)));
  std::sort(opened.begin(), opened.end());
  EXPECT_EQ(opened, (std::vector<int>{0, 1, 2, 3}));
}

// Offers spread over the board: the sender of each finds it, whatever the order of opening.
TEST(OffersBoard, EveryOfferIsFoundAmongMany) {
  std::vector<Slot> memory(64);
  Slots slots(memory.data(), 64);
  std::vector<int> at;
  for (std::uint64_t k = 0; k < 60; ++k) at.push_back(slots.open(terms(9, 2, k, 8)));
  for (std::uint64_t k = 60; k-- > 0;) {
    const auto claim = take(slots, message(9, 2, k), 8);
    ASSERT_TRUE(claim.has_value()) << k;
    EXPECT_EQ(claim->index_in_board, at[k]);
    EXPECT_TRUE(Slots::fill(*claim, 8));
  }
  EXPECT_FALSE(take(slots, message(9, 2, 60), 8).has_value());  // never offered
}

// A sender that wrote the receive buffer itself: the receiver settles Written, with the count.
TEST(OffersBoard, WrittenInPlaceSettlesWithItsCount) {
  std::vector<Slot> memory(2);
  Slots slots(memory.data(), 2);
  Terms t = terms(4, 2, 0, 48);
  t.in_place = 1;
  t.layout.segments = 1;
  t.layout.segment[0].block = 48;
  const int s = slots.open(t);
  const auto claim = take(slots, message(4, 2, 0), 48);
  ASSERT_TRUE(claim.has_value());
  EXPECT_EQ(claim->terms.in_place, 1);
  EXPECT_EQ(claim->terms.layout.segment[0].block, 48);
  EXPECT_TRUE(Slots::fill(*claim, 48, true));
  EXPECT_FALSE(slots.retract(s));  // a cancel now is refused: the receive completes
  EXPECT_FALSE(take(slots, message(4, 2, 0), 48).has_value());
  const Outcome o = slots.settle(s);
  EXPECT_EQ(o.phase, Phase::Written);
  EXPECT_EQ(o.bytes, 48);
}

// A receive the MPI refused after its offer was taken: the receiver withdraws the offer and
// waits until the sender stopped writing; the sender's fill fails (it sends the data instead,
// no notice), and a new offer in the same slot is never marked by the old claim.
TEST(OffersBoard, WithdrawnWhileTakenTheSendersFillFails) {
  std::vector<Slot> memory(1);
  Slots slots(memory.data(), 1);
  for (int round = 0; round < 2000; ++round) {
    const int s = slots.open(terms(3, 1, static_cast<std::uint64_t>(round), 32));
    ASSERT_EQ(s, 0);
    const auto claim = take(slots, message(3, 1, static_cast<std::uint64_t>(round)), 32);
    ASSERT_TRUE(claim.has_value());
    bool filled = true;
    std::thread sender([&] {
      for (int spin = 0; spin < round % 50; ++spin)
        std::atomic_signal_fence(std::memory_order_seq_cst);
      filled = Slots::fill(*claim, 32);
    });
    const Outcome o = slots.settle(s);  // the receive was refused
    sender.join();
    // Either the sender filled first (settled Filled) or it saw the withdrawal (Released).
    ASSERT_EQ(o.phase, filled ? Phase::Filled : Phase::Released);
    // The slot is free, and a stale claim cannot mark the next offer.
    const int again = slots.open(terms(3, 1, 100000, 32));
    ASSERT_EQ(again, 0);
    EXPECT_FALSE(Slots::fill(*claim, 32));
    EXPECT_FALSE(Slots::fail(*claim));
    EXPECT_TRUE(slots.retract(again));
    EXPECT_EQ(slots.settle(again).phase, Phase::Retracted);
  }
}

TEST(OffersBoard, RetractedIsNeverTakenAndReopenGivesBack) {
  std::vector<Slot> memory(2);
  Slots slots(memory.data(), 2);
  const int s = slots.open(terms(0, 1, 0, 8));
  EXPECT_TRUE(slots.retract(s));
  EXPECT_FALSE(take(slots, message(0, 1, 0), 8).has_value());
  EXPECT_EQ(slots.settle(s).phase, Phase::Retracted);
  const int u = slots.open(terms(0, 1, 1, 8));
  auto claim = take(slots, message(0, 1, 1), 8);
  ASSERT_TRUE(claim.has_value());
  EXPECT_TRUE(Slots::reopen(*claim));
  EXPECT_TRUE(slots.retract(u));
  EXPECT_EQ(slots.settle(u).phase, Phase::Retracted);
}

// A sender that took an offer and cannot map its landing buffer declines it: the data then comes
// by the MPI, so the receive may still be cancelled, and the receiver learns to stop offering.
TEST(OffersBoard, DeclinedOfferSettlesAsNotFilled) {
  std::vector<Slot> memory(1);
  Slots slots(memory.data(), 1);
  const int s = slots.open(terms(2, 4, 0, 16));
  const auto claim = take(slots, message(2, 4, 0), 8);
  ASSERT_TRUE(claim.has_value());
  EXPECT_TRUE(Slots::decline(*claim));
  EXPECT_FALSE(take(slots, message(2, 4, 0), 8).has_value());
  EXPECT_TRUE(slots.retract(s));
  EXPECT_EQ(slots.settle(s).phase, Phase::Declined);
  EXPECT_EQ(slots.open(terms(2, 4, 1, 16)), s);
}

TEST(OffersBoard, FullBoardRefusesAnOffer) {
  std::vector<Slot> memory(2);
  Slots slots(memory.data(), 2);
  EXPECT_GE(slots.open(terms(0, 1, 0, 8)), 0);
  EXPECT_GE(slots.open(terms(0, 2, 0, 8)), 0);
  EXPECT_EQ(slots.open(terms(0, 3, 0, 8)), -1);
}

// The search for a free slot starts where the receiver says and wraps around; the slots taken
// and settled in between are found again.
TEST(OffersBoard, OpenSearchesFromTheSlotGivenAndWraps) {
  std::vector<Slot> memory(4);
  Slots slots(memory.data(), 4);
  EXPECT_EQ(slots.open(terms(0, 1, 0, 8), 2), 2);
  EXPECT_EQ(slots.open(terms(0, 2, 0, 8), 2), 3);  // 2 is in use
  EXPECT_EQ(slots.open(terms(0, 3, 0, 8), 3), 0);  // wrapped past the last
  EXPECT_EQ(slots.open(terms(0, 4, 0, 8), 0), 1);
  EXPECT_EQ(slots.open(terms(0, 5, 0, 8), 1), -1);  // all four in use
  slots.settle(2);
  EXPECT_EQ(slots.open(terms(0, 6, 0, 8), 3), 2);  // from 3: 3, 0 and 1 in use
}

// A sender's search also starts where it says and wraps: every open offer is found from any
// starting slot, and one that is not there from none.
TEST(OffersBoard, TakeFindsTheOfferFromAnyStartingSlot) {
  constexpr int kSlots = 5;
  for (int from = 0; from < kSlots; ++from) {
    for (int at = 0; at < kSlots; ++at) {
      std::vector<Slot> memory(kSlots);
      Slots slots(memory.data(), kSlots);
      for (int i = 0; i < kSlots; ++i) ASSERT_EQ(slots.open(terms(2, i, 0, 8), i), i);
      bool offered = false;
      const auto claim = slots.take(message(2, at, 0), 8, offered, from);
      ASSERT_TRUE(claim.has_value()) << "from " << from << ", offer at " << at;
      EXPECT_EQ(claim->index_in_board, at);
      EXPECT_FALSE(slots.take(message(2, kSlots, 0), 8, offered, from).has_value());
      EXPECT_FALSE(offered);
    }
  }
}

// A sender thread takes while the receiver retracts: exactly one wins, every time, and the
// outcome the receiver settles agrees with who won.
TEST(OffersBoard, TakeAndRetractRaceHasOneWinner) {
  std::vector<Slot> memory(1);
  Slots slots(memory.data(), 1);
  for (std::uint64_t round = 0; round < 20000; ++round) {
    const int s = slots.open(terms(5, 9, round, 32));
    ASSERT_EQ(s, 0);
    std::atomic<bool> go{false};
    bool taken = false;
    std::thread sender([&] {
      while (!go.load()) {
      }
      if (auto c = take(slots, message(5, 9, round), 32)) {
        taken = true;
        ASSERT_TRUE(Slots::fill(*c, 32));
      }
    });
    go.store(true);
    const bool retracted = slots.retract(s);
    sender.join();
    ASSERT_NE(taken, retracted);
    const Outcome o = slots.settle(s);
    ASSERT_EQ(o.phase, taken ? Phase::Filled : Phase::Retracted);
  }
}

}  // namespace
}  // namespace strider::offers
