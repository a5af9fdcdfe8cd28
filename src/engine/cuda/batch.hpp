// Batched copies, stream-ordered (CUB style): many objects of their own canonical forms packed,
// unpacked or copied layout to layout by one kernel launch (batch_plan.hpp has the model).
// CUDA-only header.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "engine/cuda/batch_plan.hpp"
#include "engine/cuda/enqueue.hpp"

namespace strider::engine::cuda {

// Memory the caller lends a batch for its job table: `host` pinned, `device` on the queue's
// device, `bytes` each. Both stay unchanged until the queued work has run.
struct BatchMemory {
  std::byte* host = nullptr;
  std::byte* device = nullptr;
  std::size_t bytes = 0;
};

// The job table memory any batch of `copies` copies fits in.
std::size_t batch_memory_bytes(std::size_t copies);

// Queues the copies (every base visible to the queue's kernels) as one launch: the job table
// written into `memory.host`, copied to `memory.device`, then the kernel, which signals
// `queue.done` (`signalled` says whether it did: not when every copy is empty). Block lists'
// tables are uploaded on first use. cudaErrorNotSupported: a form no kernel takes, nothing
// queued; cudaErrorInvalidValue: sides of different sizes, a block list without its state, or
// too little memory.
cudaError_t enqueue_batch(Span<const BatchCopy> copies, const Queue& queue, BatchMemory memory,
                          const Policy& policy, bool* signalled = nullptr);

// The launch alone, for a table already in device memory at `table` (plan_batch's, with its
// block lists' tables in device memory too).
cudaError_t launch_batch(const BatchPlan& plan, const std::byte* table, cudaStream_t stream,
                         const Completion& done = {});

}  // namespace strider::engine::cuda
