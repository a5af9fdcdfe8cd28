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
#include <optional>

#include "runtime/device_context.hpp"
#include "runtime/log.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::runtime {
namespace {

std::atomic<bool> g_cuda_unusable{false};

bool no_gpu_here(cudaError_t rc) {
  return rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver ||
         rc == cudaErrorInitializationError || rc == cudaErrorCompatNotSupportedOnDevice;
}

// The driver's context queries (driver_entry_point: libstrider does not link libcuda).
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
    get_current = driver_entry_point<GetCurrent>("cuCtxGetCurrent");
    primary_state = driver_entry_point<PrimaryState>("cuDevicePrimaryCtxGetState");
    device_get = driver_entry_point<DeviceGet>("cuDeviceGet");
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

// The driver's plural pointer query with only the attributes a classification needs: 0.07-0.10
// us where cudaPointerGetAttributes takes 0.12-0.17 (bench/call_cost, H100). It answers with
// empty values, not an error, for memory CUDA does not know.
struct DriverQuery {
  using GetAttributes = CUresult (*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);
  GetAttributes get = driver_entry_point<GetAttributes>("cuPointerGetAttributes");

  std::optional<PointerInfo> classify(const void* p) const {
    if (get == nullptr) return std::nullopt;
    CUpointer_attribute names[4] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_DEVICE_POINTER};
    unsigned type = 0, managed = 0;
    int ordinal = -1;
    CUdeviceptr device_pointer = 0;
    void* values[4] = {&type, &ordinal, &managed, &device_pointer};
    if (get(4, names, values, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) {
      return std::nullopt;
    }
    void* const mapped = reinterpret_cast<void*>(device_pointer);
    if (managed) return PointerInfo{MemoryKind::Managed, ordinal, const_cast<void*>(p)};
    if (type == CU_MEMORYTYPE_DEVICE) {
      return PointerInfo{MemoryKind::Device, ordinal, const_cast<void*>(p)};
    }
    if (type == CU_MEMORYTYPE_HOST) return PointerInfo{MemoryKind::PinnedHost, ordinal, mapped};
    return PointerInfo{};
  }
};

}  // namespace

PointerInfo pointer_info(const void* p) {
  if (p == nullptr || g_cuda_unusable.load(std::memory_order_relaxed)) return {};
  if (in_brk_heap(p) || !gpu_memory_possible()) return {};
  static const DriverQuery driver;
  if (auto info = driver.classify(p)) return *info;
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
