#include <cuda_runtime.h>

#include <cstring>
#include <list>
#include <map>
#include <mutex>

#include "runtime/device_context.hpp"
#include "transfer/wire_ipc.hpp"

namespace strider::transfer {
namespace {

// Mappings kept open at most; a peer's pool holds a few dozen wires in steady state.
constexpr std::size_t kMaxImports = 256;

struct Exports {
  std::mutex mutex;
  std::map<const void*, WireHandle> by_base;
};
Exports& exports() {
  static Exports* e = new Exports;  // never destroyed: the pool may free wires at exit
  return *e;
}

struct Import {
  WireHandle handle;
  int device = -1;
  std::byte* mapped = nullptr;
};
struct Imports {
  std::mutex mutex;
  std::list<Import> recent;  // most recently used first
};
Imports& imports() {
  static Imports* i = new Imports;
  return *i;
}

bool same(const WireHandle& a, const WireHandle& b) {
  return std::memcmp(a.bytes.data(), b.bytes.data(), a.bytes.size()) == 0;
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

std::byte* import_wire(const WireHandle& handle, std::string& error) {
  int device = -1;
  if (const cudaError_t rc = cudaGetDevice(&device)) {
    (void)cudaGetLastError();
    error = runtime::cuda_error_text("cudaGetDevice", rc);
    return nullptr;
  }
  Imports& im = imports();
  std::lock_guard lock(im.mutex);
  for (auto it = im.recent.begin(); it != im.recent.end(); ++it) {
    if (it->device == device && same(it->handle, handle)) {
      im.recent.splice(im.recent.begin(), im.recent, it);
      return it->mapped;
    }
  }
  cudaIpcMemHandle_t h{};
  std::memcpy(&h, handle.bytes.data(), sizeof(h));
  void* mapped = nullptr;
  const cudaError_t rc = cudaIpcOpenMemHandle(&mapped, h, cudaIpcMemLazyEnablePeerAccess);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    error = runtime::cuda_error_text("cudaIpcOpenMemHandle", rc);
    return nullptr;
  }
  im.recent.push_front({handle, device, static_cast<std::byte*>(mapped)});
  while (im.recent.size() > kMaxImports) {
    runtime::DeviceGuard guard(im.recent.back().device);
    (void)cudaIpcCloseMemHandle(im.recent.back().mapped);
    (void)cudaGetLastError();
    im.recent.pop_back();
  }
  return static_cast<std::byte*>(mapped);
}

void forget_wire_export(const void* base) {
  Exports& e = exports();
  std::lock_guard lock(e.mutex);
  e.by_base.erase(base);
}

void close_wire_imports() {
  Imports& im = imports();
  std::lock_guard lock(im.mutex);
  for (const Import& i : im.recent) {
    runtime::DeviceGuard guard(i.device);
    (void)cudaIpcCloseMemHandle(i.mapped);
  }
  (void)cudaGetLastError();
  im.recent.clear();
}

}  // namespace strider::transfer
