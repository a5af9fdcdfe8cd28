// The GPU engine's stream-ordered core (CUB-style): each call queues its work on the caller's
// stream, with the caller's scratch memory, and returns a CUDA error; none synchronizes, so a
// caller may batch calls and overlap them with other work. The synchronous engine
// (gpu_engine.hpp) and the transfer layer sit on top. CUDA-only header.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/cuda/gpu_engine.hpp"
#include "engine/cuda/launch.hpp"

namespace strider::engine::cuda {

// Device memory the caller lends a call (the packed bytes pass through it when the packed
// buffer is not device-visible).
struct Scratch {
  std::byte* data = nullptr;
  std::size_t bytes = 0;
};

// The GPU a call runs on, its stream, and its size (for grid shapes). `done`, when set, is
// signalled by the call's kernel if that kernel is the call's last operation: each call below
// says so through its optional `signalled` (false when it ends in a copy).
struct Queue {
  int device = 0;  // must be the current device
  cudaStream_t stream = nullptr;
  int multiprocessors = 1;
  Completion done;
};

// Queues the pack of `count` elements from `user` (visible to `queue.device`'s kernels) into
// `packed`: directly where the kernels see it, else through `scratch` and one copy.
// cudaErrorNotSupported: a form no kernel takes (more dims than a launch holds), nothing
// queued; cudaErrorInvalidValue: the scratch is too small.
cudaError_t pack_async(const Layout& layout, std::int64_t count, const runtime::BufferView& user,
                       const runtime::BufferView& packed, const Queue& queue, Scratch scratch,
                       const Policy& policy, bool* signalled = nullptr);
// The reverse: from `packed` into `user` (visible to the queue's kernels).
cudaError_t unpack_async(const Layout& layout, std::int64_t count,
                         const runtime::BufferView& packed, const runtime::BufferView& user,
                         const Queue& queue, Scratch scratch, const Policy& policy,
                         bool* signalled = nullptr);

// Queues the kernels between two device-visible buffers (a contiguous object is one copy
// instead when there is no signal to give or it is over Policy::kSignalledCopyMaxBytes). The
// block list's table is uploaded on first use per device (once per type).
cudaError_t enqueue_transfer(const Layout& layout, std::int64_t count, std::byte* user,
                             std::byte* packed, Direction direction, const Queue& queue,
                             const Policy& policy, bool* signalled = nullptr);

// Whether the kernels of `device` reach the buffer (device memory of another GPU is reached by
// copies instead).
bool visible_on(const runtime::BufferView& buffer, int device);

}  // namespace strider::engine::cuda
