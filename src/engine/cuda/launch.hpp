// Kernel launches for a strided shape or a block list, dispatched on word size and index width.
// CUDA-only header.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "canon/direction.hpp"
#include "engine/cuda/launch_plan.hpp"

namespace strider::engine::cuda {

using canon::Direction;

// How a kernel tells the host it has finished, without the driver: each block fences its writes
// system-wide and counts itself in `blocks` (device memory, 0 between launches); the last one
// resets the count and writes `seq` to `flag` (mapped pinned host memory), on which the host
// spins. bench/call_cost: 1-2 us sooner than a stream or event synchronization. Unset (null
// flag): no signal.
struct Completion {
  unsigned* blocks = nullptr;
  unsigned* flag = nullptr;
  unsigned seq = 0;
};

// `wide`: 64-bit index arithmetic (required unless fits_32bit(shape); tests force it).
cudaError_t launch_strided(const StridedShape& shape, bool wide, std::byte* user, std::byte* packed,
                           Direction direction, cudaStream_t stream, int multiprocessors,
                           const Completion& done = {});

// How a block list's threads find their piece: by search (any list), or a warp per piece (many
// small pieces); Auto picks by the pieces' mean size.
enum class ListKernel { Auto, Search, WarpPerPiece };

// `table` is the device copy of list_table<Div>(form, shape.word) with Div chosen by `wide`.
cudaError_t launch_list(const ListShape& shape, const void* table, int npieces, bool wide,
                        std::byte* user, std::byte* packed, Direction direction,
                        cudaStream_t stream, int multiprocessors,
                        ListKernel kind = ListKernel::Auto, const Completion& done = {});

}  // namespace strider::engine::cuda
