#include "offers/stream_table.hpp"

#include <atomic>

namespace strider::offers {
namespace {

// Atomic: strider_get_stats may read them from a thread other than the one making MPI calls.
std::atomic<std::int64_t> held{0};
std::atomic<std::uint64_t> forgotten{0};

}  // namespace

StreamTally stream_tally() {
  const std::int64_t now = held.load(std::memory_order_relaxed);
  return {static_cast<std::uint64_t>(now < 0 ? 0 : now), forgotten.load(std::memory_order_relaxed)};
}

void tally_streams(std::int64_t held_change, std::uint64_t forgotten_more) {
  held.fetch_add(held_change, std::memory_order_relaxed);
  forgotten.fetch_add(forgotten_more, std::memory_order_relaxed);
}

}  // namespace strider::offers
