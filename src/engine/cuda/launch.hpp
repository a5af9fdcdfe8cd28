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

// How a block list's threads find their piece: by search (any list), or a warp per piece (many
// small pieces); Auto picks by the pieces' mean size.
enum class ListKernel { Auto, Search, WarpPerPiece };

// `table` is the device copy of list_table<Div>(form, shape.word) with Div chosen by `wide`.
cudaError_t launch_list(const ListShape& shape, const void* table, int npieces, bool wide,
                        std::byte* user, std::byte* packed, Direction direction,
                        cudaStream_t stream, int multiprocessors,
                        ListKernel kind = ListKernel::Auto);

}  // namespace strider::engine::cuda
