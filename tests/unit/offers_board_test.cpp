// The offer slots (transfer/offers/board.hpp): a taken offer cannot be retracted and a retracted
// one cannot be taken, also when a sender and the receiver race; a slot reused for a new offer
// is never taken through a stale look.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "transfer/offers/board.hpp"

namespace strider::transfer::offers {
namespace {

constexpr std::uint64_t kComm = 3;

MessageId message(int sender, int tag, std::uint64_t index, std::uint64_t comm = kComm) {
  return MessageId{comm, sender, tag, index};
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
  EXPECT_FALSE(slots.take(message(2, 7, 3), 16).has_value());             // another sender
  EXPECT_FALSE(slots.take(message(1, 7, 3, kComm + 1), 16).has_value());  // another communicator
  EXPECT_FALSE(slots.take(message(1, 7, 2), 16).has_value());             // another message
  EXPECT_FALSE(slots.take(message(1, 7, 3), 68).has_value());             // over the capacity
  EXPECT_FALSE(slots.take(message(1, 7, 3), 6).has_value());              // not whole elements
  const auto claim = slots.take(message(1, 7, 3), 16);
  ASSERT_TRUE(claim.has_value());
  EXPECT_FALSE(slots.retract(s));
  EXPECT_FALSE(slots.take(message(1, 7, 3), 16).has_value());  // taken once only
  Slots::fill(*claim, 16);
  const Outcome o = slots.settle(s);
  EXPECT_EQ(o.phase, Phase::Filled);
  EXPECT_EQ(o.bytes, 16);
  EXPECT_EQ(slots.open(terms(1, 7, 4, 64)), s);  // the slot is free again
}

TEST(OffersBoard, RetractedIsNeverTakenAndReopenGivesBack) {
  std::vector<Slot> memory(2);
  Slots slots(memory.data(), 2);
  const int s = slots.open(terms(0, 1, 0, 8));
  EXPECT_TRUE(slots.retract(s));
  EXPECT_FALSE(slots.take(message(0, 1, 0), 8).has_value());
  EXPECT_EQ(slots.settle(s).phase, Phase::Retracted);
  const int u = slots.open(terms(0, 1, 1, 8));
  auto claim = slots.take(message(0, 1, 1), 8);
  ASSERT_TRUE(claim.has_value());
  Slots::reopen(*claim);
  EXPECT_TRUE(slots.retract(u));
  EXPECT_EQ(slots.settle(u).phase, Phase::Retracted);
}

// A sender that took an offer and cannot map its landing buffer declines it: the data then comes
// by the MPI, so the receive may still be cancelled, and the receiver learns to stop offering.
TEST(OffersBoard, DeclinedOfferSettlesAsNotFilled) {
  std::vector<Slot> memory(1);
  Slots slots(memory.data(), 1);
  const int s = slots.open(terms(2, 4, 0, 16));
  const auto claim = slots.take(message(2, 4, 0), 8);
  ASSERT_TRUE(claim.has_value());
  Slots::decline(*claim);
  EXPECT_FALSE(slots.take(message(2, 4, 0), 8).has_value());
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
      if (auto c = slots.take(message(5, 9, round), 32)) {
        taken = true;
        Slots::fill(*c, 32);
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
}  // namespace strider::transfer::offers
