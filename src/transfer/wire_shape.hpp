// How a wire buffer is described to the MPI so that the MPI itself bounds a message that is
// longer than the receive (issue 13).
//
// Receives: Open MPI 4.1's ob1 moves a rendezvous message whole into a contiguous receive
// buffer (its RGET and RDMA-put protocols read the message's length, not the posted one), so a
// truncated message overruns the buffer: posted as MPI_PACKED, a 400,000-byte message matched
// by an 8-byte receive overran a pooled wire buffer. Posted instead with a datatype that has a
// one-byte hole before its last byte, the receive is non-contiguous to the MPI, which then
// copies through its datatype engine and stops at the posted size; the last byte is moved over
// the hole afterwards. The receive is the same call on the same communicator, source and tag
// as before, so the MPI matches exactly the messages it matched for the application's receive,
// in the same order: only where the bytes land changes. The MPI reports the truncation itself
// (error class, statuses, the error handler), and the first `capacity` bytes of the message
// arrive, as for the application's own receive. A receive of fewer than 2 bytes has no room for
// a hole: it is posted for 2 and Strider reports a message past `capacity` itself.
//
// Sends to self: Open MPI 4.1.4's path for a message to the sending process itself, sent
// contiguous, truncates it silently (no MPI_ERR_TRUNCATE, the receive's count) into a smaller
// receive posted before it, and writes it whole past a smaller receive posted after it (seen with
// Open MPI alone; tests/mpi/p2p_self_truncation_test.cpp). A non-contiguous send is bounded and
// reported there, so a packed message to self (whose application type was most often
// non-contiguous) goes with the same hole, built on MPI_PACKED as the plain send was: its last
// byte copied one place on, past the hole. Left to the MPI: a 1-byte message to self (no room
// for a hole) and what the application itself sends contiguous.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <utility>

namespace strider::transfer {

// Owns the datatype it created, if it created one (freed when destroyed; move-only). Holed
// types come from a process-wide cache, one per (bytes, base), committed once and freed at
// MPI_Finalize (free_holed_types): a burst of receives of equal sizes creates none.
struct WireShape {
  MPI_Datatype type = MPI_PACKED;  // what the MPI is given: `count` of `type`
  int count = 0;
  int posted = 0;              // bytes the MPI may move (a receive's: at least the capacity)
  std::int64_t footprint = 0;  // bytes of wire buffer it spans (one more than posted with a hole)
  bool hole = false;           // the message's last byte lies at `posted`, past a one-byte hole
  bool owned = false;          // `type` is this shape's to free (not the cache's)

  WireShape() = default;
  WireShape(WireShape&& other) noexcept { *this = std::move(other); }
  WireShape& operator=(WireShape&& other) noexcept;
  ~WireShape();
};

// Whether wire buffers are bounded this way: STRIDER_WIRE_BOUND, or by default on every MPI
// but MPICH (whose receive stops at the posted size, as the truncation tests show).
bool wire_shapes_bounded();

// The receive for `capacity` packed bytes; a created type is committed and the caller frees it.
int make_wire_receive(int capacity, WireShape& out);
// The send of `bytes` packed bytes, bounded only for a message to the sending process itself
// (`to_self`) of 2 bytes or more; with a hole, pack_outgoing (wire.hpp) copies the last byte past
// it.
int make_wire_send(int bytes, bool to_self, WireShape& out);
void free_wire_shape(WireShape& r);
// At MPI_Finalize: the cached holed types freed.
void free_holed_types();

}  // namespace strider::transfer
