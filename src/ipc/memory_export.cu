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

// The allocation a pointer lies in, by one plural driver query (driver_entry_point: libstrider
// does not link libcuda); a pointer CUDA does not know gets empty values.
struct AllocationFacts {
  CUdeviceptr base = 0;
  std::size_t bytes = 0;
  unsigned long long buffer_id = 0;
  unsigned managed = 0;
  void* pool = nullptr;
};

struct Driver {
  using GetAttributes = CUresult (*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);
  GetAttributes get = runtime::driver_entry_point<GetAttributes>("cuPointerGetAttributes");

  // False where the driver cannot answer. A driver without the pool attribute is asked without
  // it (its pools' memory is then refused by cudaIpcGetMemHandle).
  bool facts(const void* address, AllocationFacts& f) const {
    if (get == nullptr) return false;
    CUpointer_attribute names[5] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                    CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                    CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                    CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE};
    void* values[5] = {&f.base, &f.bytes, &f.buffer_id, &f.managed, &f.pool};
    const auto p = reinterpret_cast<CUdeviceptr>(address);
    return get(5, names, values, p) == CUDA_SUCCESS || get(4, names, values, p) == CUDA_SUCCESS;
  }
};

const Driver& driver() {
  static const Driver d;
  return d;
}

struct Exports {
  std::mutex mutex;
  std::map<const std::byte*, MemoryExport> by_base;
};

Exports& exports() {
  static Exports* e = new Exports;  // never destroyed: exports may be asked for at exit
  return *e;
}

// Registers `exported` under its base (mutex held); past kMaxExports the cache starts again.
void remember(Exports& e, const MemoryExport& exported) {
  if (e.by_base.size() >= kMaxExports && e.by_base.count(exported.base) == 0) e.by_base.clear();
  e.by_base[exported.base] = exported;
}

}  // namespace

bool export_memory(const void* address, int device, MemoryExport& out, std::string& error) {
  AllocationFacts f;
  if (!driver().facts(address, f)) {
    error = "the CUDA driver could not describe the pointer (cuPointerGetAttributes)";
    return false;
  }
  if (f.base == 0 || f.buffer_id == 0) {
    error = "not memory of a CUDA allocation";
    return false;
  }
  if (f.managed) {
    error = "managed memory is not shared by CUDA IPC";
    return false;
  }
  // Pool memory (cudaMallocAsync) needs shareable pool handles, which legacy IPC does not take.
  if (f.pool != nullptr) {
    error = "memory of a cudaMallocAsync pool is not shared by legacy CUDA IPC";
    return false;
  }
  const auto* first = reinterpret_cast<const std::byte*>(f.base);
  Exports& e = exports();
  std::lock_guard lock(e.mutex);
  if (auto it = e.by_base.find(first); it != e.by_base.end()) {
    if (it->second.buffer_id == f.buffer_id && it->second.bytes == f.bytes) {
      out = it->second;
      return true;
    }
    e.by_base.erase(it);  // freed and reallocated at the same address: a new allocation
  }
  runtime::DeviceGuard guard(device);
  cudaIpcMemHandle_t h{};
  const cudaError_t rc = guard.ok() ? cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(f.base))
                                    : cudaErrorInvalidDevice;
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    error = runtime::cuda_error_text("cudaIpcGetMemHandle", rc);
    return false;
  }
  static_assert(sizeof(h) == sizeof(out.handle.bytes));
  std::memcpy(out.handle.bytes.data(), &h, sizeof(h));
  out.base = first;
  out.bytes = f.bytes;
  out.buffer_id = f.buffer_id;
  remember(e, out);
  return true;
}

bool still_exported(const MemoryExport& exported) {
  AllocationFacts f;
  if (!driver().facts(exported.base, f) || f.base != reinterpret_cast<CUdeviceptr>(exported.base) ||
      f.bytes != exported.bytes || f.buffer_id != exported.buffer_id) {
    return false;
  }
  Exports& e = exports();
  std::lock_guard lock(e.mutex);
  remember(e, exported);  // again, where the cache had started over
  return true;
}

std::byte* own_export_base(const WireHandle& handle) {
  Exports& e = exports();
  std::lock_guard lock(e.mutex);
  for (const auto& [base, cached] : e.by_base) {
    if (cached.handle.bytes == handle.bytes) return const_cast<std::byte*>(base);
  }
  return nullptr;
}

}  // namespace strider::ipc
