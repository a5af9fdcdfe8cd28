// STRIDER_PROFILE: where a process's time goes inside Strider, by phase (calls, total and mean
// time), printed to stderr at MPI_Finalize. Phases nest (an Isend's time includes its offer
// claim), so the totals are inclusive and do not add up. Off: one load per timed scope.
#pragma once

#include <chrono>
#include <cstdint>

namespace strider::runtime {

enum class Phase : int {
  Isend,  // a nonblocking send, whole
  Irecv,  // a nonblocking receive, whole
  // The entry points below are timed after the flush their call starts with (Flush).
  Completion,     // Wait, Test, Waitall, Testall, Waitany, Testany, Waitsome, Testsome
  MpiCompletion,  // the MPI's completion call inside it
  Startall,       // MPI_Start and MPI_Startall
  Flush,          // a flush of deferred sends that had sends queued
  FlushPack,      // its pack kernel into wires
  FlushFill,      // its writes into same-node offers
  FlushStart,     // its MPI_Start of each send or notice
  SendInit,       // the MPI's persistent-send init of a deferred send
  OfferClaim,     // a sender looking for and claiming its receiver's offer
  OfferWait,      // the part of it spent waiting for an offer not yet made
  OfferPublish,   // a receiver publishing an offer
  OfferLanding,   // its landing buffer taken and exported
  OfferInPlace,   // its receive buffer described for writes in place
  OfferOpen,      // its slot opened on the board
  ClaimFind,      // a sender finding its receiver's offer on the board
  ClaimMap,       // a sender mapping what a claimed offer writes
  ClaimImport,    // its receive buffer's allocations opened (the CUDA IPC cache)
  ClaimLayout,    // its receive layout mapped over them
  IpcOpen,        // a CUDA IPC handle opened (a miss of the import cache)
  Classify,       // a point-to-point buffer classified (Strider's or the MPI's, and how)
  RecvPrepare,    // a receive's wire and shape prepared
  RecvPost,       // the MPI's receive call
  SettleWave,     // offered receives settled together
  UnpackWave,     // receives unpacked by one kernel
  StartReceives,  // MPI_Start(all) with offers: its receives counted, started and offered
  StartWrites,    // its sends' writes into offers and packs into wires (a kernel each)
  StartFills,     // the writes into offers
  FillRelease,    // a write's mappings let go and its slot filled
  StartPacks,     // the packs into wires
  StartSends,     // its sends started, or their notices sent, in order
  BatchQueue,     // a batch kernel's tables built and queued with it (engine/cuda, host time)
  BatchWait,      // the wait for that kernel
  Count
};

// Whether STRIDER_PROFILE is on (read once).
bool profiling();
void add_time(Phase phase, std::uint64_t ns);

// Times its scope into `phase` when profiling.
class Timed {
 public:
  explicit Timed(Phase phase) : phase_(phase), on_(profiling()) {
    if (on_) start_ = std::chrono::steady_clock::now();
  }
  ~Timed() {
    if (!on_) return;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - start_);
    add_time(phase_, static_cast<std::uint64_t>(ns.count()));
  }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  Phase phase_;
  bool on_;
  std::chrono::steady_clock::time_point start_{};
};

// The table to stderr, one line per phase that ran, each prefixed with the world rank; nothing
// when profiling is off.
void print_profile(int rank);

}  // namespace strider::runtime
