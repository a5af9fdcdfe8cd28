// The offers a receiver publishes (docs/same-node-p2p.md), as slots in memory every process of
// the node maps (an MPI shared window; plain memory in the unit test). A slot's state word holds
// a generation and a phase; every change of hands is one compare-and-swap on it, so a sender
// that read an offer can take it only if it is still that very offer, still open.
//
//   receiver: open()  -> Open
//   sender:   take()  Open -> Taken, then fill() -> Filled, or -> Written when it wrote the
//             receive buffer itself in the receiver's layout (or fail() -> Failed)
//   sender:   decline() Taken -> Declined (it cannot write the landing buffer: the data goes
//             by the MPI, and the receiver offers it nothing more)
//   receiver: retract() Open -> Retracted; settle() reads the outcome and empties the slot
//   receiver: settle() of a slot still Taken (its offer dropped before its receive completed:
//             offers are published only once the MPI accepted their receive, so only a failure
//             in Strider after that): Taken -> Withdrawn, then waits until the sender, whose
//             fill then fails, has stopped writing (-> Released) and sends the data instead.
// The sender's moves out of Taken are compare-and-swaps too, so a slot withdrawn and reused for
// a new offer is never marked by a stale claim.
//
// The fields are written while the slot is empty and published by the release store of Open;
// a sender reads them after an acquire load of Open, and its CAS fails if the slot changed since.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "ipc/direct_layout.hpp"

namespace strider::offers {

// Where a landing buffer is: a device wire exported by CUDA IPC, or the receiver's part of the
// board itself (host memory: the host mode that lets CI run the protocol).
enum class Landing : std::int32_t { Device = 1, Board = 2 };

// The message an offer is for: its stream (the communicator's agreed name, comm_ledgers.hpp;
// the sender's world rank; the tag) and its index in the stream.
struct MessageId {
  std::uint64_t comm = 0;
  std::int32_t sender = -1;
  std::int32_t tag = -1;
  std::uint64_t index = 0;
  bool operator==(const MessageId&) const = default;
};

struct Terms {
  MessageId message;          // the one the receive will match
  std::int64_t capacity = 0;  // bytes the receive holds
  std::int64_t unit = 1;      // the receive's element size: a filled count is a multiple of it
  Landing landing = Landing::Board;
  std::array<unsigned char, 64> handle{};  // the device wire's IPC handle
  // The receive buffer itself, which a sender of exactly `capacity` bytes may write in the
  // receiver's layout instead of the landing buffer (direct_layout.hpp); `gpu` is the receiver's
  // GPU (engine::cuda::device_fingerprint).
  std::int64_t in_place = 0;  // 1: `layout` and `gpu` are set
  std::uint64_t gpu = 0;
  ipc::DirectLayout layout;
};

// One slot, as laid out in shared memory (8-byte alignment only: an MPI window guarantees no
// more).
struct Slot {
  std::uint64_t state = 0;  // generation << 8 | phase; through std::atomic_ref only
  std::int64_t filled = 0;  // bytes the sender wrote
  Terms terms;
};

enum class Phase : std::uint8_t {
  Empty = 0,
  Open = 1,
  Taken = 2,
  Filled = 3,
  Retracted = 4,
  Failed = 5,
  Declined = 6,
  Written = 7,    // filled, straight into the receive buffer (nothing to unpack)
  Withdrawn = 8,  // taken, then given up by the receiver (its receive ended without it)
  Released = 9    // the sender saw it withdrawn and writes nothing more
};

// What became of an offer once its receive completed.
struct Outcome {
  // Filled, Written, Failed, Retracted (not taken: real data arrived) or Declined (the same,
  // and the sender asks for no more offers).
  Phase phase = Phase::Empty;
  std::int64_t bytes = 0;  // Filled or Written: how many
};

// A sender's hold on an offer it took.
struct Claim {
  Slot* slot = nullptr;
  std::uint64_t generation = 0;
  Terms terms;
  int index_in_board = -1;
};

// One receiver's slots (a view: the memory belongs to the board).
class Slots {
 public:
  Slots() = default;
  Slots(Slot* slots, int count) : slots_(slots), count_(count) {}
  int count() const { return count_; }

  // Receiver: publishes an offer; the slot, or -1 when every slot is in use. The search starts
  // at slot `from` and wraps around: a receiver that starts past its last opened slot finds a
  // free one at once while its offers are settled in the order they were made.
  int open(const Terms& terms, int from = 0);
  // Receiver: withdraws an open offer; false if a sender took it first (true if it declined).
  bool retract(int slot);
  // Receiver, once its receive completed or was refused: the outcome (an offer still open is
  // retracted now; one still taken is withdrawn, waiting for its sender: Released), and the
  // slot is emptied.
  Outcome settle(int slot);

  // Sender: takes the open offer for `message` if there is one whose capacity and unit admit
  // `bytes`. `offered`: whether an open offer for `message` was there at all. The search starts
  // at slot `from` and wraps around (a message's offer is in one slot at most).
  std::optional<Claim> take(const MessageId& message, std::int64_t bytes, bool& offered,
                            int from = 0);
  // Sender: the bytes are in the landing buffer (Filled) or in the receive buffer itself
  // (`in_place`: Written) / could not be written. Each of these four returns false when the
  // receiver withdrew the offer meanwhile (the slot is then Released): send the data instead,
  // and no notice.
  static bool fill(const Claim& claim, std::int64_t bytes, bool in_place = false);
  static bool fail(const Claim& claim);
  // Sender: gives back an offer it took but cannot fill (nothing written yet).
  static bool reopen(const Claim& claim);
  // Sender: gives up an offer it took and cannot fill for good; it sends the data instead.
  static bool decline(const Claim& claim);

 private:
  Slot* slots_ = nullptr;
  int count_ = 0;
};

}  // namespace strider::offers
