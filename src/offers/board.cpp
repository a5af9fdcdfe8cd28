#include "offers/board.hpp"

namespace strider::offers {
namespace {

constexpr std::uint64_t word(std::uint64_t generation, Phase phase) {
  return generation << 8 | static_cast<std::uint64_t>(phase);
}
constexpr Phase phase_of(std::uint64_t w) { return static_cast<Phase>(w & 0xff); }
constexpr std::uint64_t generation_of(std::uint64_t w) { return w >> 8; }

std::atomic_ref<std::uint64_t> state(Slot& s) { return std::atomic_ref<std::uint64_t>(s.state); }

// The sender's move out of Taken; where the receiver withdrew the offer meanwhile, Released
// (and a slot that has moved on since is left alone).
bool leave_taken(const Claim& claim, Phase to) {
  std::uint64_t w = word(claim.generation, Phase::Taken);
  if (state(*claim.slot)
          .compare_exchange_strong(w, word(claim.generation, to), std::memory_order_acq_rel)) {
    return true;
  }
  w = word(claim.generation, Phase::Withdrawn);
  state(*claim.slot)
      .compare_exchange_strong(w, word(claim.generation, Phase::Released),
                               std::memory_order_acq_rel);
  return false;
}

}  // namespace

int Slots::open(const Terms& terms, int from) {
  for (int k = 0; k < count_; ++k) {
    const int i = (from + k) % count_;
    Slot& s = slots_[i];
    const std::uint64_t w = state(s).load(std::memory_order_acquire);
    if (phase_of(w) != Phase::Empty) continue;
    s.terms = terms;
    s.filled = 0;
    state(s).store(word(generation_of(w) + 1, Phase::Open), std::memory_order_release);
    return i;
  }
  return -1;
}

bool Slots::retract(int slot) {
  Slot& s = slots_[slot];
  std::uint64_t w = state(s).load(std::memory_order_acquire);
  if (phase_of(w) == Phase::Retracted || phase_of(w) == Phase::Declined) return true;
  if (phase_of(w) != Phase::Open) return false;
  return state(s).compare_exchange_strong(w, word(generation_of(w), Phase::Retracted),
                                          std::memory_order_acq_rel);
}

Outcome Slots::settle(int slot) {
  Slot& s = slots_[slot];
  retract(slot);  // an offer nobody took: closed before anyone can
  std::uint64_t w = state(s).load(std::memory_order_acquire);
  if (phase_of(w) == Phase::Taken &&
      state(s).compare_exchange_strong(w, word(generation_of(w), Phase::Withdrawn),
                                       std::memory_order_acq_rel)) {
    // Refused receive: the sender's next move fails; wait until it stopped writing (one kernel).
    while (phase_of(w = state(s).load(std::memory_order_acquire)) != Phase::Released) {
    }
  }
  Outcome out{phase_of(w), 0};
  if (out.phase == Phase::Filled || out.phase == Phase::Written) out.bytes = s.filled;
  state(s).store(word(generation_of(w), Phase::Empty), std::memory_order_release);
  return out;
}

std::optional<Claim> Slots::take(const MessageId& message, std::int64_t bytes, bool& offered,
                                 int from) {
  offered = false;
  for (int k = 0; k < count_; ++k) {
    const int i = (from + k) % count_;
    Slot& s = slots_[i];
    std::uint64_t w = state(s).load(std::memory_order_acquire);
    if (phase_of(w) != Phase::Open || !(s.terms.message == message)) continue;
    // Copied only here (terms hold a layout of a few KiB); checked by the CAS below: it fails
    // if the slot changed since.
    const Terms terms = s.terms;
    if (!(terms.message == message)) continue;
    offered = true;
    if (bytes > terms.capacity || terms.unit <= 0 || bytes % terms.unit != 0) return std::nullopt;
    if (!state(s).compare_exchange_strong(w, word(generation_of(w), Phase::Taken),
                                          std::memory_order_acq_rel)) {
      return std::nullopt;  // retracted meanwhile
    }
    return Claim{&s, generation_of(w), terms, i};
  }
  return std::nullopt;
}

bool Slots::fill(const Claim& claim, std::int64_t bytes, bool in_place) {
  claim.slot->filled = bytes;  // published by the move to Filled or Written
  return leave_taken(claim, in_place ? Phase::Written : Phase::Filled);
}

bool Slots::fail(const Claim& claim) { return leave_taken(claim, Phase::Failed); }

bool Slots::decline(const Claim& claim) { return leave_taken(claim, Phase::Declined); }

bool Slots::reopen(const Claim& claim) { return leave_taken(claim, Phase::Open); }

}  // namespace strider::offers
