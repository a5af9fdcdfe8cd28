#include "ipc/wire_buffers.hpp"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "ipc/settings.hpp"

namespace strider::ipc {
namespace {

Allocator host_allocator() {
  return {[](std::size_t bytes) { return std::aligned_alloc(256, bytes); },
          [](void* p) { std::free(p); }};
}

// The pools live until the process ends: destroying them at exit would call into a CUDA runtime
// that may already be gone, so they are trimmed at MPI_Finalize instead.
struct Pools {
  std::mutex mutex;
  SizeClassPool* host = nullptr;
  SizeClassPool* pinned = nullptr;
  std::map<int, SizeClassPool*> device;

  SizeClassPool& get(WireMemory memory, int device_id) {
    std::lock_guard lock(mutex);
    const std::size_t bound = settings().pool_bytes;
    switch (memory) {
      case WireMemory::Host:
        if (!host) host = new SizeClassPool(host_allocator(), bound);
        return *host;
      case WireMemory::Pinned:
        if (!pinned) pinned = new SizeClassPool(pinned_allocator(), bound);
        return *pinned;
      case WireMemory::Device:
        break;
    }
    auto& pool = device[device_id];
    if (!pool) pool = new SizeClassPool(device_allocator(device_id), bound);
    return *pool;
  }
};

Pools& pools() {
  static Pools* p = new Pools;
  return *p;
}

const char* name(WireMemory memory) {
  switch (memory) {
    case WireMemory::Host:
      return "host";
    case WireMemory::Pinned:
      return "pinned host";
    case WireMemory::Device:
      return "device";
  }
  return "?";
}

}  // namespace

bool acquire_wire(WireMemory memory, int device, std::size_t bytes, WireBuffer& out,
                  std::string& error) {
  out.memory = memory;
  out.device = device;
  out.block = pools().get(memory, device).acquire(bytes);
  if (!out.block) {
    error = std::string("no ") + name(memory) + " memory for a " + std::to_string(bytes) +
            "-byte wire buffer";
    return false;
  }
  return true;
}

void release_wire(WireBuffer& buffer) {
  if (!buffer.block) return;
  pools().get(buffer.memory, buffer.device).give_back(buffer.block);
  buffer.block = {};
}

PoolStats pool_stats() {
  Pools& p = pools();
  std::lock_guard lock(p.mutex);
  PoolStats s;
  if (p.pinned) {
    s.pinned_bytes = p.pinned->held();
    s.allocations += p.pinned->allocations();
  }
  for (const auto& [id, pool] : p.device) {
    s.device_bytes += pool->held();
    s.allocations += pool->allocations();
  }
  return s;
}

void trim_pools() {
  Pools& p = pools();
  std::lock_guard lock(p.mutex);
  if (p.host) p.host->trim();
  if (p.pinned) p.pinned->trim();
  for (auto& [id, pool] : p.device) pool->trim();
}

}  // namespace strider::ipc
