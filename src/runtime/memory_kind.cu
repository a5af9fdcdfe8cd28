// Build with CUDA: ask the runtime. A process without a usable GPU or driver gets one failed
// query and is treated as host-only from then on. A process that has not created a CUDA context
// yet has no GPU memory either: asking the runtime would create one (hundreds of MiB of GPU
// memory and a long stall per rank of a host-only program), so until a context exists every
// buffer is host memory without a query.
#include <cuda.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "runtime/log.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::runtime {
namespace {

std::atomic<bool> g_cuda_unusable{false};

bool no_gpu_here(cudaError_t rc) {
  return rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver ||
         rc == cudaErrorInitializationError || rc == cudaErrorCompatNotSupportedOnDevice;
}

// The driver's context queries, reached through the runtime so libstrider does not link libcuda
// (which machines without a GPU driver lack).
struct ContextProbe {
  using GetCurrent = CUresult (*)(CUcontext*);
  using PrimaryState = CUresult (*)(CUdevice, unsigned int*, int*);
  using DeviceGet = CUresult (*)(CUdevice*, int);
  GetCurrent get_current = nullptr;
  PrimaryState primary_state = nullptr;
  DeviceGet device_get = nullptr;
  int devices = 0;

  ContextProbe() {
    if (cudaGetDeviceCount(&devices) != cudaSuccess) {
      (void)cudaGetLastError();
      devices = 0;
      return;
    }
    get_current = entry_point<GetCurrent>("cuCtxGetCurrent");
    primary_state = entry_point<PrimaryState>("cuDevicePrimaryCtxGetState");
    device_get = entry_point<DeviceGet>("cuDeviceGet");
  }

  template <class Fn>
  static Fn entry_point(const char* name) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    return reinterpret_cast<Fn>(fn);
  }

  // True when a context exists (or the probe cannot tell, to stay on the safe side).
  bool context_exists() const {
    if (devices == 0) return false;
    if (!get_current || !primary_state || !device_get) return true;
    CUcontext current = nullptr;
    if (get_current(&current) == CUDA_SUCCESS && current != nullptr) return true;
    for (int d = 0; d < devices; ++d) {
      CUdevice device = 0;
      unsigned int flags = 0;
      int active = 0;
      if (device_get(&device, d) != CUDA_SUCCESS ||
          primary_state(device, &flags, &active) != CUDA_SUCCESS || active) {
        return true;
      }
    }
    return false;
  }
};

// The brk heap (small mallocs of the main thread) as it was when Strider was loaded. CUDA maps
// device, managed and pinned memory with mmap, which never lands inside the brk range, so an
// address there is ordinary host memory without asking the runtime (242 ns a query on an
// H200). Host memory registered with cudaHostRegister there counts as host: correct for every
// use, only without the pinned fast paths.
const std::uintptr_t g_heap_start = reinterpret_cast<std::uintptr_t>(sbrk(0));

bool in_brk_heap(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return a >= g_heap_start && a < reinterpret_cast<std::uintptr_t>(sbrk(0));
}

// Once a context has been seen the process is a GPU process for good.
bool gpu_memory_possible() {
  static std::atomic<bool> seen{false};
  if (seen.load(std::memory_order_relaxed)) return true;
  static const ContextProbe probe;
  if (!probe.context_exists()) return false;
  seen.store(true, std::memory_order_relaxed);
  return true;
}

}  // namespace

PointerInfo pointer_info(const void* p) {
  if (p == nullptr || g_cuda_unusable.load(std::memory_order_relaxed)) return {};
  if (in_brk_heap(p) || !gpu_memory_possible()) return {};
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
