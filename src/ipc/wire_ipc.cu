#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <mutex>

#include "ipc/memory_export.hpp"
#include "ipc/wire_imports.hpp"
#include "ipc/wire_ipc.hpp"
#include "runtime/device_context.hpp"
#include "runtime/profile.hpp"

namespace strider::ipc {
namespace {

struct Exports {
  std::mutex mutex;
  std::map<const void*, WireHandle> by_base;
};
Exports& exports() {
  static Exports* e = new Exports;  // never destroyed: the pool may free wires at exit
  return *e;
}

// Whether `handle` exports an allocation of this process (a wire or the application's memory):
// then `base` is that allocation, used as it is by kernels on its own GPU, or null with `error`
// where it is on another GPU than `device`.
bool own_base(const WireHandle& handle, int device, std::byte*& base, std::string& error) {
  base = own_export_base(handle);
  if (base == nullptr) {
    Exports& e = exports();
    std::lock_guard lock(e.mutex);
    for (const auto& [b, h] : e.by_base) {
      if (h.bytes == handle.bytes) base = static_cast<std::byte*>(const_cast<void*>(b));
    }
  }
  if (base == nullptr) return false;
  cudaPointerAttributes attributes{};
  const cudaError_t rc = cudaPointerGetAttributes(&attributes, base);
  if (rc != cudaSuccess || attributes.device != device) {
    (void)cudaGetLastError();
    error = rc != cudaSuccess ? runtime::cuda_error_text("cudaPointerGetAttributes", rc)
                              : "this process's own memory on another GPU";
    base = nullptr;
  }
  return true;
}

std::byte* open_mapping(const WireHandle& handle, int device, std::string& error, bool& clash,
                        bool& own) {
  if (std::byte* base = nullptr; own_base(handle, device, base, error)) {
    own = base != nullptr;  // the allocation as it is: nothing opened, nothing to close
    return base;
  }
  const runtime::Timed timed(runtime::Phase::IpcOpen);
  cudaIpcMemHandle_t h{};
  std::memcpy(&h, handle.bytes.data(), sizeof(h));
  void* mapped = nullptr;
  runtime::DeviceGuard guard(device);
  const cudaError_t rc = guard.ok()
                             ? cudaIpcOpenMemHandle(&mapped, h, cudaIpcMemLazyEnablePeerAccess)
                             : cudaErrorInvalidDevice;
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    clash = rc == cudaErrorAlreadyMapped;
    error = runtime::cuda_error_text("cudaIpcOpenMemHandle", rc);
    return nullptr;
  }
  return static_cast<std::byte*>(mapped);
}

void close_mapping(std::byte* mapped, int device) {
  runtime::DeviceGuard guard(device);
  (void)cudaIpcCloseMemHandle(mapped);
  (void)cudaGetLastError();
}

WireImports& imports() {
  static WireImports* i =
      new WireImports({open_mapping, close_mapping}, kMaxImports, kMaxImportBytes);
  return *i;
}

}  // namespace

bool export_wire(const WireBuffer& wire, WireHandle& out, std::string& error) {
  if (wire.memory != WireMemory::Device || wire.data() == nullptr) {
    error = "only device wires are shared";
    return false;
  }
  Exports& e = exports();
  std::lock_guard lock(e.mutex);
  if (auto it = e.by_base.find(wire.data()); it != e.by_base.end()) {
    out = it->second;
    return true;
  }
  runtime::DeviceGuard guard(wire.device);
  cudaIpcMemHandle_t h{};
  const cudaError_t rc = guard.ok() ? cudaIpcGetMemHandle(&h, wire.data()) : cudaErrorInvalidDevice;
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    error = runtime::cuda_error_text("cudaIpcGetMemHandle", rc);
    return false;
  }
  static_assert(sizeof(h) == sizeof(out.bytes));
  std::memcpy(out.bytes.data(), &h, sizeof(h));
  e.by_base.emplace(wire.data(), out);
  return true;
}

std::byte* import_wire(const WireHandle& handle, std::size_t bytes, int device,
                       std::string& error) {
  return imports().pin(handle, bytes, device, error);
}

void unpin_wire(const std::byte* mapped) { imports().unpin(mapped); }

void forget_wire_export(const void* base) {
  Exports& e = exports();
  std::lock_guard lock(e.mutex);
  e.by_base.erase(base);
}

void close_wire_imports() { imports().close_all(); }

}  // namespace strider::ipc
