// How a wire receive is posted so that no message larger than it writes past the wire buffer
// (issue 13). Open MPI 4.1's ob1 moves a rendezvous message whole into a contiguous receive
// buffer (its RGET and RDMA-put protocols read the message's length, not the posted one), so a
// truncated message overruns the buffer: posted as MPI_PACKED, a 400,000-byte message matched
// by an 8-byte receive overran a pooled wire buffer. Posted instead with a datatype that has a
// one-byte hole before its last byte, the receive is non-contiguous to the MPI, which then
// copies through its datatype engine and stops at the posted size; the last byte is moved over
// the hole afterwards. The receive is the same call on the same communicator, source and tag
// as before, so the MPI matches exactly the messages it matched for the application's receive,
// in the same order: only where the bytes land changes.
//
// The MPI reports the truncation itself (error class, statuses, the error handler), and the
// first `capacity` bytes of the message arrive, as for the application's own receive. A
// receive of fewer than 2 bytes has no room for a hole: it is posted for 2 and Strider reports
// a message past `capacity` itself.
#pragma once

#include <mpi.h>

#include <utility>

namespace strider::transfer {

// Owns the datatype it created (freed when destroyed; move-only).
struct WireReceive {
  MPI_Datatype type = MPI_PACKED;  // what the MPI is given: `count` of `type`
  int count = 0;
  int posted = 0;     // bytes the MPI may deliver (at least the capacity)
  int footprint = 0;  // bytes of wire buffer it may write
  bool hole = false;  // the byte at `posted` belongs at `posted - 1`

  WireReceive() = default;
  WireReceive(WireReceive&& other) noexcept { *this = std::move(other); }
  WireReceive& operator=(WireReceive&& other) noexcept;
  ~WireReceive();
};

// Whether wire receives are bounded this way: STRIDER_WIRE_BOUND, or by default on every MPI
// but MPICH (whose receive stops at the posted size, as the truncation tests show).
bool wire_receives_bounded();

// The receive for `capacity` packed bytes; a created type is committed and the caller frees it.
int make_wire_receive(int capacity, WireReceive& out);
void free_wire_receive(WireReceive& r);

}  // namespace strider::transfer
