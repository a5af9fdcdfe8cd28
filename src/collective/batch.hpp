// The GPU side of a collective: every piece packed by one kernel launch (the GPU engine's
// batch), pieces the kernels cannot take one by one through the staged path, and a rank's own
// piece copied from one layout into the other on the GPU.
#pragma once

#include <mpi.h>

#include <vector>

#include "collective/side.hpp"
#include "engine/cuda/batch_plan.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::collective {

// `wire` is the view of the side's wire buffer; pieces marked skip are left out.
int pack_batch(const std::vector<Piece>& pieces, const runtime::BufferView& wire, MPI_Comm comm);
int unpack_batch(const std::vector<Piece>& pieces, const runtime::BufferView& wire, MPI_Comm comm);

// Fills each piece from its source, `sources[i]` for piece i: its packed bytes (a peer's wire
// mapped into this process: no form) or a peer's buffer in the peer's layout (read in place),
// and copies `own_from` into `own_to` when given (a rank's own piece, layout to layout), all by
// one kernel launch on GPU `device`. Pieces marked skip or empty are left out; every other one,
// and the own pieces, must be batch_takes() (else an error: the caller checks first).
int unpack_batch_from(const std::vector<Piece>& pieces,
                      const std::vector<engine::cuda::BatchSide>& sources, const Piece* own_from,
                      const Piece* own_to, int device, MPI_Comm comm);

// Whether the GPU engine's batch can move the piece (bytes in GPU memory, a layout its kernels
// serve), whether or not it is marked skip.
bool batch_takes(const Piece& p);

// Copies `from` into `to` (equal packed bytes) without the MPI: directly on the GPU where the
// engine serves both layouts, else through a host copy of the packed bytes.
int copy_piece(const transfer::Object& from, const transfer::Object& to, MPI_Comm comm);

}  // namespace strider::collective
