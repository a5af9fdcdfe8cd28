// Which of a collective's send pieces a same-node reader may take in place
// (direct_layout.hpp): the piece cut into segments, each inside one cudaMalloc allocation that
// CUDA IPC exports, and the reader's form of such a piece.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "engine/cuda/type_state.hpp"
#include "transfer/collective/direct_layout.hpp"
#include "transfer/collective/side.hpp"
#include "transfer/memory_export.hpp"

namespace strider::transfer::collective {

// This rank's allocations of a piece read in place, as it addresses them (for its own records).
using AllocationBases = std::array<const std::byte*, DirectPolicy::kMaxAllocations>;

// The allocations a call's pieces lie in, exported once per call (a call's pieces share a few
// buffers, and no allocation can be freed while the call runs).
using CallExports = std::vector<MemoryExport>;

// The piece as a reader may take it in place, if it can: a non-empty piece in device memory
// (not managed) whose blocks, cut along their outer dims where an allocation ends, make at most
// kMaxSegments segments in at most kMaxAllocations exported allocations. False with `why`
// otherwise.
bool describe_in_place(const Piece& piece, CallExports& exports, DirectLayout& out,
                       AllocationBases& bases, std::string& why);

// The reader's form of a piece and its engine state (a block list's device tables). Forms of
// several segments are cached by their pieces (their tables are uploaded once); each holder keeps
// its entry alive.
struct ReaderForm {
  canon::CanonicalForm form;
  engine::cuda::TypeState state;
};
std::shared_ptr<const ReaderForm> reader_form_of(const DirectLayout& layout,
                                                 const AllocationBases& bases);

}  // namespace strider::transfer::collective
