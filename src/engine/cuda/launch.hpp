// Kernel launches for a strided shape or a block list, dispatched on word size and index width.
// CUDA-only header.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "engine/cuda/launch_plan.hpp"

namespace strider::engine::cuda {

enum class Direction { Pack, Unpack };

// `wide`: 64-bit index arithmetic (required unless fits_32bit(shape); tests force it).
cudaError_t launch_strided(const StridedShape& shape, bool wide, std::byte* user, std::byte* packed,
                           Direction direction, cudaStream_t stream, int multiprocessors);

// `table` is the device copy of piece_table<Div>(form, shape.word) with Div chosen by `wide`.
cudaError_t launch_list(const ListShape& shape, const void* table, int npieces, bool wide,
                        std::byte* user, std::byte* packed, Direction direction,
                        cudaStream_t stream, int multiprocessors);

}  // namespace strider::engine::cuda
