// Build with CUDA: ask the runtime. A process without a usable GPU or driver gets one failed
// query and is treated as host-only from then on.
#include <cuda_runtime.h>

#include <atomic>

#include "runtime/log.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::runtime {
namespace {

std::atomic<bool> g_cuda_unusable{false};

bool no_gpu_here(cudaError_t rc) {
  return rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver ||
         rc == cudaErrorInitializationError || rc == cudaErrorCompatNotSupportedOnDevice;
}

}  // namespace

PointerInfo pointer_info(const void* p) {
  if (p == nullptr || g_cuda_unusable.load(std::memory_order_relaxed)) return {};
  cudaPointerAttributes a{};
  const cudaError_t rc = cudaPointerGetAttributes(&a, p);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();  // clear the error so the application does not see it
    if (no_gpu_here(rc)) {
      if (!g_cuda_unusable.exchange(true)) {
        log(LogLevel::Info, "CUDA unusable here (%s): treating all buffers as host memory",
            cudaGetErrorString(rc));
      }
      return {};
    }
    // Unknown failure: let neither engine touch what might be device memory.
    log(LogLevel::Warn, "cudaPointerGetAttributes failed (%s)", cudaGetErrorString(rc));
    return {MemoryKind::Device, -1, nullptr};
  }
  switch (a.type) {
    case cudaMemoryTypeDevice:
      return {MemoryKind::Device, a.device, const_cast<void*>(p)};
    case cudaMemoryTypeManaged:
      return {MemoryKind::Managed, a.device, const_cast<void*>(p)};
    case cudaMemoryTypeHost:
      return {MemoryKind::PinnedHost, a.device, a.devicePointer};
    default:
      return {};
  }
}

}  // namespace strider::runtime
