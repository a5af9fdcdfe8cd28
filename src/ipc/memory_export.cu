#include <cuda.h>
#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <mutex>

#include "ipc/memory_export.hpp"
#include "runtime/device_context.hpp"

namespace strider::ipc {
namespace {

// Exports kept; past this many the cache starts again (a stale entry is never wrong, only kept).
constexpr std::size_t kMaxExports = 256;

// The driver's queries (driver_entry_point: libstrider does not link libcuda).
struct Driver {
  using AddressRange = CUresult (*)(CUdeviceptr*, std::size_t*, CUdeviceptr);
  using PointerAttribute = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
  AddressRange address_range = runtime::driver_entry_point<AddressRange>("cuMemGetAddressRange");
  PointerAttribute attribute =
      runtime::driver_entry_point<PointerAttribute>("cuPointerGetAttribute");
};

struct Cached {
  unsigned long long buffer_id = 0;
  MemoryExport exported;
};

struct Exports {
  std::mutex mutex;
  std::map<const std::byte*, Cached> by_base;
};

Exports& exports() {
  static Exports* e = new Exports;  // never destroyed: exports may be asked for at exit
  return *e;
}

}  // namespace

bool export_memory(const void* address, int device, MemoryExport& out, std::string& error) {
  static const Driver driver;
  if (!driver.address_range || !driver.attribute) {
    error = "the CUDA driver lacks cuMemGetAddressRange or cuPointerGetAttribute";
    return false;
  }
  const auto p = reinterpret_cast<CUdeviceptr>(address);
  CUdeviceptr base = 0;
  std::size_t bytes = 0;
  unsigned long long buffer_id = 0;
  void* pool = nullptr;
  int managed = 0;
  if (driver.address_range(&base, &bytes, p) != CUDA_SUCCESS ||
      driver.attribute(&buffer_id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p) != CUDA_SUCCESS ||
      driver.attribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p) != CUDA_SUCCESS) {
    error = "not memory of a CUDA allocation";
    return false;
  }
  if (managed) {
    error = "managed memory is not shared by CUDA IPC";
    return false;
  }
  // Pool memory (cudaMallocAsync) needs shareable pool handles, which legacy IPC does not take.
  if (driver.attribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p) == CUDA_SUCCESS &&
      pool != nullptr) {
    error = "memory of a cudaMallocAsync pool is not shared by legacy CUDA IPC";
    return false;
  }
  const auto* first = reinterpret_cast<const std::byte*>(base);
  Exports& e = exports();
  std::lock_guard lock(e.mutex);
  if (auto it = e.by_base.find(first); it != e.by_base.end()) {
    if (it->second.buffer_id == buffer_id && it->second.exported.bytes == bytes) {
      out = it->second.exported;
      return true;
    }
    e.by_base.erase(it);  // freed and reallocated at the same address: a new allocation
  }
  runtime::DeviceGuard guard(device);
  cudaIpcMemHandle_t h{};
  const cudaError_t rc =
      guard.ok() ? cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(base)) : cudaErrorInvalidDevice;
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    error = runtime::cuda_error_text("cudaIpcGetMemHandle", rc);
    return false;
  }
  static_assert(sizeof(h) == sizeof(out.handle.bytes));
  std::memcpy(out.handle.bytes.data(), &h, sizeof(h));
  out.base = first;
  out.bytes = bytes;
  if (e.by_base.size() >= kMaxExports) e.by_base.clear();
  e.by_base[first] = {buffer_id, out};
  return true;
}

std::byte* own_export_base(const WireHandle& handle) {
  Exports& e = exports();
  std::lock_guard lock(e.mutex);
  for (const auto& [base, cached] : e.by_base) {
    if (cached.exported.handle.bytes == handle.bytes) return const_cast<std::byte*>(base);
  }
  return nullptr;
}

}  // namespace strider::ipc
