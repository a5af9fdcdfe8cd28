// The GPU side of a collective: every piece packed by one kernel launch (the GPU engine's
// batch), pieces the kernels cannot take one by one through the staged path, and a rank's own
// piece copied from one layout into the other on the GPU.
#pragma once

#include <mpi.h>

#include <vector>

#include "runtime/memory_kind.hpp"
#include "transfer/collective/side.hpp"

namespace strider::transfer::collective {

// `wire` is the view of the side's wire buffer; pieces marked skip are left out.
int pack_batch(const std::vector<Piece>& pieces, const runtime::BufferView& wire, MPI_Comm comm);
int unpack_batch(const std::vector<Piece>& pieces, const runtime::BufferView& wire, MPI_Comm comm);

// Copies `from` into `to` (equal packed bytes) without the MPI: directly on the GPU where the
// engine serves both layouts, else through a host copy of the packed bytes.
int copy_piece(const Object& from, const Object& to, MPI_Comm comm);

}  // namespace strider::transfer::collective
