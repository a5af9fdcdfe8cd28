// Process-wide interposer state: the plan cache, its invalidation hook, and counters.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "plan/plan.hpp"
#include "plan/plan_cache.hpp"

namespace strider::transfer {

struct Counters {
  std::atomic<std::uint64_t> types_planned{0};
  std::atomic<std::uint64_t> types_unsupported{0};
  std::atomic<std::uint64_t> packs_host{0};
  std::atomic<std::uint64_t> unpacks_host{0};
  std::atomic<std::uint64_t> packs_forwarded{0};
  std::atomic<std::uint64_t> unpacks_forwarded{0};
  std::atomic<std::uint64_t> packs_gpu{0};
  std::atomic<std::uint64_t> unpacks_gpu{0};
  std::atomic<std::uint64_t> packs_staged{0};
  std::atomic<std::uint64_t> unpacks_staged{0};
  std::atomic<std::uint64_t> sends_packed{0};
  std::atomic<std::uint64_t> recvs_packed{0};
  std::atomic<std::uint64_t> sends_forwarded{0};
  std::atomic<std::uint64_t> recvs_forwarded{0};
  std::atomic<std::uint64_t> transfers_device{0};
  std::atomic<std::uint64_t> transfers_oneshot{0};
  std::atomic<std::uint64_t> transfers_staged{0};
  std::atomic<std::uint64_t> transfers_host{0};
  std::atomic<std::uint64_t> collectives_served{0};
  std::atomic<std::uint64_t> collectives_forwarded{0};
  std::atomic<std::uint64_t> persistent_refused{0};
  std::atomic<std::uint64_t> collectives_same_node{0};
  std::atomic<std::uint64_t> collective_pieces_in_place{0};
  std::atomic<std::uint64_t> offers_made{0};
  std::atomic<std::uint64_t> offers_taken{0};
  std::atomic<std::uint64_t> offers_used{0};
  std::atomic<std::uint64_t> offers_in_place{0};
  std::atomic<std::uint64_t> reductions_on_gpu{0};
  std::atomic<std::uint64_t> unpack_waves{0};  // completion calls that unpacked 2+ receives at once
  std::atomic<std::uint64_t> pack_waves{0};    // starts and flushes that packed 2+ sends at once
  std::atomic<std::uint64_t> persistent_served{0};  // persistent requests Strider moves
  std::atomic<std::uint64_t> sends_deferred{0};     // nonblocking sends packed at a later call
  std::atomic<std::uint64_t> deferred_flushes{0};   // calls that packed and started them
  std::atomic<std::uint64_t> progress_flushes{0};   // of those, the progress thread's
  std::atomic<std::uint64_t> receives_early{0};     // completed in another's wave (early_arrivals)
  std::atomic<std::uint64_t> default_stream_checks{0};  // offers::PublishedTogether
};

Counters& counters();
plan::PlanCache& plans();

// This layer's part of MPI_Init / MPI_Finalize (calls/lifecycle.hpp has the order): the
// configuration's problems reported, the type attribute's key, the node layout; the plans and
// the key dropped.
void start();
void stop();

// Builds and caches the plan of a freshly committed type (MPI has committed it already).
void on_commit(MPI_Datatype type);
// Drops the plan of a type about to be freed.
void on_free(MPI_Datatype type);

// The plan for `type`: cached at commit, built on first use for predefined types, recovered
// from the type's attribute for duplicates of committed types. nullptr when the type is unknown
// (uncommitted, invalid): the caller forwards to the MPI, which reports the error.
std::shared_ptr<const plan::Plan> plan_for(MPI_Datatype type);

}  // namespace strider::transfer
