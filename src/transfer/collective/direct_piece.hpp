// Which of a collective's send pieces a same-node reader may take in place
// (direct_layout.hpp): the piece's layout and its allocation's CUDA IPC export.
#pragma once

#include <string>

#include "transfer/collective/direct_layout.hpp"
#include "transfer/collective/side.hpp"

namespace strider::transfer::collective {

// The piece as a reader may take it in place, if it can: a non-empty piece in device memory
// (not managed) of a strided layout, wholly inside one cudaMalloc allocation that CUDA IPC
// exports. False with `why` otherwise.
bool describe_in_place(const Piece& piece, DirectLayout& out, std::string& why);

}  // namespace strider::transfer::collective
