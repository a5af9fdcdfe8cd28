#include <cuda_runtime.h>

#include <cstring>
#include <list>
#include <map>
#include <mutex>

#include "runtime/device_context.hpp"
#include "transfer/wire_ipc.hpp"

namespace strider::transfer {
namespace {

// Unpinned mappings kept open at most, by count and by bytes: a peer's pool holds a few dozen
// wires in steady state, and a wire over its pool's bound is freed after each call, each time
// leaving a stale mapping that holds its memory until closed.
constexpr std::size_t kMaxImports = 64;
constexpr std::size_t kMaxImportBytes = std::size_t{4} << 30;

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
  std::size_t bytes = 0;
  int pins = 0;  // calls reading it now: never closed while pinned
};
struct Imports {
  std::mutex mutex;
  std::list<Import> recent;  // most recently used first
  std::size_t bytes = 0;     // of all mappings
};

void close_import(Imports& im, std::list<Import>::iterator it) {
  runtime::DeviceGuard guard(it->device);
  (void)cudaIpcCloseMemHandle(it->mapped);
  (void)cudaGetLastError();
  im.bytes -= it->bytes;
  im.recent.erase(it);
}

// Closes unpinned mappings, oldest first, until both bounds hold.
void trim_imports(Imports& im) {
  auto it = im.recent.end();
  while (it != im.recent.begin() &&
         (im.recent.size() > kMaxImports || im.bytes > kMaxImportBytes)) {
    --it;
    if (it->pins > 0) continue;
    auto victim = it++;
    close_import(im, victim);
  }
}
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

std::byte* import_wire(const WireHandle& handle, std::size_t bytes, int device,
                       std::string& error) {
  Imports& im = imports();
  std::lock_guard lock(im.mutex);
  for (auto it = im.recent.begin(); it != im.recent.end(); ++it) {
    if (it->device == device && same(it->handle, handle)) {
      im.recent.splice(im.recent.begin(), im.recent, it);
      ++it->pins;
      return it->mapped;
    }
  }
  cudaIpcMemHandle_t h{};
  std::memcpy(&h, handle.bytes.data(), sizeof(h));
  void* mapped = nullptr;
  runtime::DeviceGuard guard(device);
  const cudaError_t rc = guard.ok()
                             ? cudaIpcOpenMemHandle(&mapped, h, cudaIpcMemLazyEnablePeerAccess)
                             : cudaErrorInvalidDevice;
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    error = runtime::cuda_error_text("cudaIpcOpenMemHandle", rc);
    return nullptr;
  }
  im.recent.push_front({handle, device, static_cast<std::byte*>(mapped), bytes, 1});
  im.bytes += bytes;
  trim_imports(im);
  return static_cast<std::byte*>(mapped);
}

void unpin_wire(const std::byte* mapped) {
  Imports& im = imports();
  std::lock_guard lock(im.mutex);
  for (Import& i : im.recent) {
    if (i.mapped == mapped && i.pins > 0) {
      --i.pins;
      break;
    }
  }
  trim_imports(im);
}

void forget_wire_export(const void* base) {
  Exports& e = exports();
  std::lock_guard lock(e.mutex);
  e.by_base.erase(base);
}

void close_wire_imports() {
  Imports& im = imports();
  std::lock_guard lock(im.mutex);
  while (!im.recent.empty()) close_import(im, im.recent.begin());
}

}  // namespace strider::transfer
