// One side of a collective on this rank, what it sends or what it receives: a piece per peer
// (or a single one), each `count` elements of a type at a byte displacement from the side's
// buffer. When Strider moves the side ("converted": GPU memory, or any host memory with
// STRIDER_COLL_HOST=pack) the pieces' packed bytes lie end to end in one wire buffer, which the
// MPI's collective sends or receives in their place.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <span>
#include <vector>

#include "ipc/wire_buffers.hpp"
#include "transfer/method.hpp"
#include "transfer/object.hpp"
#include "transfer/wire.hpp"

namespace strider::collective {

// A piece as the application gave it.
struct PieceSpec {
  std::int64_t displacement = 0;  // bytes from the side's buffer
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

struct Piece {
  transfer::Object object;  // count 0 for a piece with no bytes
  std::int64_t offset = 0;  // of its packed bytes in the wire
  std::int64_t size = 0;    // packed bytes of one element (the wire type's size)
  bool skip = false;        // moved another way (a rank's own piece), not through the wire
  bool preload = false;     // an in-place receive piece the MPI reads: packed into the wire first
  std::int64_t bytes() const { return object.plan ? object.bytes() : 0; }
};

class Side {
 public:
  // The side's pieces at `buffer`. False when Strider cannot describe it (an unknown type, for
  // which the MPI reports the error, or MPI_BOTTOM with a relative layout).
  bool describe(const void* buffer, std::span<const PieceSpec> specs);

  bool converted() const { return converted_; }
  bool gpu() const { return gpu_; }
  std::int64_t bytes() const { return bytes_; }
  std::vector<Piece>& pieces() { return pieces_; }
  const std::vector<Piece>& pieces() const { return pieces_; }
  std::byte* wire() { return wire_.data(); }

  // Takes the wire buffer (sized for every piece) in the memory the side's method needs.
  int acquire(MPI_Comm comm, bool receive);
  // Packs the pieces not skipped into the wire / unpacks them from it.
  int pack(MPI_Comm comm);
  int unpack(MPI_Comm comm);
  // Packs the pieces marked preload (skipped or not) into the wire: MPI_IN_PLACE stays in place.
  int preload(MPI_Comm comm);
  // Keeps the pieces' types alive for an unpack after the application may have freed them (a
  // nonblocking call; only the MPI's own unpack, the staged path, needs the handle).
  int hold_types();

  // The wire travels as MPI_BYTE (counts and displacements in bytes) instead of one contiguous
  // type per element size, where every byte count fits an int (else it keeps the wire types);
  // set before the wire arguments are read.
  void travel_as_bytes() { as_bytes_ = bytes_ <= INT_MAX; }
  // The wire is pinned host memory even on a CUDA-aware MPI (a persistent request: see
  // transfer::p2p_object); set before acquire.
  void keep_off_device() { off_device_ = true; }

  // The wire arguments of a piece: its element count and displacement in wire elements, and
  // the wire type. False when a count or displacement does not fit an int.
  bool wire_count(std::size_t i, int& count, int& displacement, MPI_Datatype& type) const;
  // Byte displacements (Alltoallw, Neighbor_alltoallw).
  bool wire_bytes(std::size_t i, int& count, MPI_Aint& displacement, MPI_Datatype& type) const;

 private:
  std::vector<Piece> pieces_;
  std::vector<transfer::HeldType> held_;
  std::int64_t bytes_ = 0;
  bool converted_ = false;
  bool gpu_ = false;
  bool as_bytes_ = false;
  bool off_device_ = false;
  transfer::Method method_ = transfer::Method::Host;
  ipc::WireBuffer wire_;
};

}  // namespace strider::collective
