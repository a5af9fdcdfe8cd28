// What Strider did between two strider_get_stats_sized() snapshots, for the GPU benchmarks.
#pragma once

#include <cstdint>
#include <string>

#include "strider/strider.h"

namespace strider::bench {

// A snapshot (strider_get_stats_sized writes only what the struct holds, whichever library).
struct StatsBox {
  strider_stats s{};
};

// The transfer methods whose counters moved between two snapshots ("a+b"), then "forwarded" if
// sends or receives went to the MPI unchanged, then "offer" / "in_place" for receives that took
// same-node offers (through a landing buffer / written in place); "none" if nothing moved.
inline std::string methods_between(const strider_stats& a, const strider_stats& z) {
  std::string ran;
  auto add = [&ran](std::uint64_t before, std::uint64_t after, const char* name) {
    if (after == before) return;
    if (!ran.empty()) ran += '+';
    ran += name;
  };
  add(a.transfers_device, z.transfers_device, "device");
  add(a.transfers_oneshot, z.transfers_oneshot, "oneshot");
  add(a.transfers_staged, z.transfers_staged, "staged");
  add(a.transfers_host, z.transfers_host, "host");
  add(a.sends_forwarded + a.recvs_forwarded, z.sends_forwarded + z.recvs_forwarded, "forwarded");
  // Same-node offers received: through a landing buffer, or written in place.
  add(a.offers_used - a.offers_in_place, z.offers_used - z.offers_in_place, "offer");
  add(a.offers_in_place, z.offers_in_place, "in_place");
  return ran.empty() ? "none" : ran;
}

}  // namespace strider::bench
