// Build with CUDA: ask the runtime. A process without a usable GPU or driver gets one failed
// query and is treated as host-only from then on.
#include <cuda_runtime.h>

#include <atomic>

#include "runtime/log.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::runtime {
namespace {

std::atomic<bool> g_cuda_unusable{false};

}  // namespace

MemoryKind memory_kind(const void* p) {
  if (p == nullptr || g_cuda_unusable.load(std::memory_order_relaxed)) return MemoryKind::Host;
  cudaPointerAttributes attributes{};
  const cudaError_t rc = cudaPointerGetAttributes(&attributes, p);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();  // clear the error so the application does not see it
    if (rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver ||
        rc == cudaErrorInitializationError || rc == cudaErrorCompatNotSupportedOnDevice) {
      if (!g_cuda_unusable.exchange(true)) {
        log(LogLevel::Info, "CUDA unusable here (%s): treating all buffers as host memory",
            cudaGetErrorString(rc));
      }
      return MemoryKind::Host;
    }
    // Unknown failure: do not let the CPU touch what might be device memory.
    log(LogLevel::Warn, "cudaPointerGetAttributes failed (%s)", cudaGetErrorString(rc));
    return MemoryKind::Device;
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice: return MemoryKind::Device;
    case cudaMemoryTypeManaged: return MemoryKind::Managed;
    case cudaMemoryTypeHost: return MemoryKind::PinnedHost;
    default: return MemoryKind::Host;
  }
}

}  // namespace strider::runtime
