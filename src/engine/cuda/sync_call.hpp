// The synchronous engine's common steps (gpu_engine.cu, gpu_engine_batch.cu): which GPU runs a
// call, its locked context and queue, the wait, and the outcome. CUDA-only, internal.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <string>

#include "engine/cuda/enqueue.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "runtime/device_context.hpp"

namespace strider::engine::cuda {

using runtime::BufferView;
using runtime::DeviceContext;
using runtime::DeviceGuard;

// The GPU whose stream runs the call: the one holding the user buffer, else the packed one.
inline int device_for(const BufferView& user, const BufferView& packed) {
  if (runtime::gpu_resident(user.info.kind) && user.info.device >= 0) return user.info.device;
  if (runtime::gpu_resident(packed.info.kind) && packed.info.device >= 0) {
    return packed.info.device;
  }
  return std::max(current_device(), 0);
}

// Maps a CUDA error to the outcome: a form no kernel takes or a lack of scratch memory falls
// back to the staged path; anything else failed.
inline Outcome outcome_of(cudaError_t rc, const char* what, std::string& error) {
  if (rc == cudaSuccess) return Outcome::Done;
  (void)cudaGetLastError();
  if (rc == cudaErrorNotSupported) {
    error = "the type has more dims than a launch holds";
    return Outcome::Fallback;
  }
  error = runtime::cuda_error_text(what, rc);
  return rc == cudaErrorMemoryAllocation ? Outcome::Fallback : Outcome::Failed;
}

// An object this GPU's kernels cannot reach is the host engine's, if the CPU may touch it.
inline bool host_engine_may_touch(const BufferView& user, std::string& error) {
  if (runtime::host_accessible(user.info.kind)) return true;
  error = "the object's memory could not be classified";
  return false;
}

// Runs `body(ctx)` on `device` with its context locked.
template <class Body>
Outcome on_device(int device, std::string& error, Body&& body) {
  DeviceGuard guard(device);
  if (!guard.ok()) {
    error = "cannot select GPU " + std::to_string(device);
    return Outcome::Failed;
  }
  DeviceContext* ctx = DeviceContext::get(device, error);
  if (!ctx) return Outcome::Failed;
  std::lock_guard lock(ctx->mutex());
  return body(*ctx);
}

// The context's queue, armed with its kernel-written completion where it has one.
inline Queue queue_of(DeviceContext& ctx) {
  Queue q{ctx.device(), ctx.stream(), ctx.multiprocessors(), {}};
  if (ctx.signal_flag() != nullptr)
    q.done = {ctx.signal_blocks(), ctx.signal_flag(), ctx.next_signal()};
  return q;
}

// Waits for the call queued on `q`: on its kernel's signal where it gives one, else the event.
inline cudaError_t wait_for(DeviceContext& ctx, const Queue& q, bool signalled) {
  return signalled ? ctx.wait_signal(q.done.seq) : ctx.wait();
}

}  // namespace strider::engine::cuda
