#include "runtime/profile.hpp"

#include <array>
#include <atomic>
#include <cstdio>

#include "runtime/config.hpp"

namespace strider::runtime {
namespace {

constexpr int kPhases = static_cast<int>(Phase::Count);
constexpr std::array<const char*, kPhases> kNames = {
    "isend",       "irecv",          "completion",    "mpi_completion", "start",
    "flush",       "flush_pack",     "flush_fill",    "flush_start",    "send_init",
    "offer_claim", "offer_wait",     "offer_publish", "offer_landing",  "offer_in_place",
    "offer_open",  "claim_find",     "claim_map",     "claim_import",   "claim_layout",
    "ipc_open",    "classify",       "recv_prepare",  "recv_post",      "settle_wave",
    "unpack_wave", "start_receives", "start_writes",  "start_fills",    "fill_release",
    "start_packs", "start_sends",    "batch_queue",   "batch_wait"};

static_assert(kNames.back() != nullptr, "a name for every phase");

struct Totals {
  std::array<std::atomic<std::uint64_t>, kPhases> calls{};
  std::array<std::atomic<std::uint64_t>, kPhases> ns{};
};

Totals& totals() {
  static Totals* t = new Totals;  // outlives static destruction at exit
  return *t;
}

}  // namespace

bool profiling() {
  static const bool on = config().profile;
  return on;
}

void add_time(Phase phase, std::uint64_t ns) {
  const auto i = static_cast<std::size_t>(phase);
  totals().calls[i].fetch_add(1, std::memory_order_relaxed);
  totals().ns[i].fetch_add(ns, std::memory_order_relaxed);
}

void print_profile(int rank) {
  if (!profiling()) return;
  const Totals& t = totals();
  for (int i = 0; i < kPhases; ++i) {
    const std::uint64_t calls = t.calls[i].load(), ns = t.ns[i].load();
    if (calls == 0) continue;
    std::fprintf(stderr, "[strider %d] profile %-14s %10llu calls %12.3f ms %10.3f us each\n", rank,
                 kNames[i], static_cast<unsigned long long>(calls), ns / 1e6,
                 ns / 1e3 / static_cast<double>(calls));
  }
}

}  // namespace strider::runtime
