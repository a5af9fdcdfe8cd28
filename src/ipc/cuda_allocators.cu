// Pinned (portable, mapped) host memory and per-GPU device memory for the wire-buffer pools.
#include <cuda_runtime.h>

#include "ipc/wire_buffers.hpp"
#include "ipc/wire_ipc.hpp"
#include "runtime/device_context.hpp"
#include "runtime/log.hpp"

namespace strider::ipc {

Allocator pinned_allocator() {
  return {[](std::size_t bytes) -> void* {
            void* p = nullptr;
            // Portable: every GPU may map it; mapped: kernels write it directly (one-shot).
            const cudaError_t rc =
                cudaHostAlloc(&p, bytes, cudaHostAllocPortable | cudaHostAllocMapped);
            if (rc != cudaSuccess) {
              (void)cudaGetLastError();
              runtime::log(runtime::LogLevel::Warn, "%s",
                           runtime::cuda_error_text("cudaHostAlloc", rc).c_str());
              return nullptr;
            }
            return p;
          },
          [](void* p) { (void)cudaFreeHost(p); }};
}

Allocator device_allocator(int device) {
  return {[device](std::size_t bytes) -> void* {
            runtime::DeviceGuard guard(device);
            void* p = nullptr;
            const cudaError_t rc = guard.ok() ? cudaMalloc(&p, bytes) : cudaErrorInvalidDevice;
            if (rc != cudaSuccess) {
              (void)cudaGetLastError();
              runtime::log(runtime::LogLevel::Warn, "%s",
                           runtime::cuda_error_text("cudaMalloc", rc).c_str());
              return nullptr;
            }
            return p;
          },
          [device](void* p) {
            forget_wire_export(p);
            runtime::DeviceGuard guard(device);
            (void)cudaFree(p);
          }};
}

}  // namespace strider::ipc
