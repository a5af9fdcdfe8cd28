// A block list's piece table on a queue's device, shared by the single and batched launches.
// CUDA-only header, internal to the engine.
#pragma once

#include <cuda_runtime.h>

#include "canon/strided_block.hpp"
#include "engine/cuda/enqueue.hpp"
#include "engine/cuda/type_state.hpp"

namespace strider::engine::cuda {

// The table of `form` for a word size and index width on `queue`'s device, uploaded on first
// use (stream-ordered) and kept in `state`. The upload's allocation may synchronize the device:
// once per type, device and word.
cudaError_t list_table_on(const canon::CanonicalForm& form, const TypeState& state,
                          const Queue& queue, int word, bool wide, const void** out);

}  // namespace strider::engine::cuda
