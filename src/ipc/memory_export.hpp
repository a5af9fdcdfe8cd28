// The application's GPU memory shared in place with a process of the same node (CUDA IPC), so
// that a same-node collective's reader can take a piece straight from the sender's buffer in
// the sender's layout: no pack kernel, no wire. Only what legacy IPC shares is exported: whole
// cudaMalloc allocations (memory of cudaMallocAsync pools, cuMemCreate and managed memory is
// refused, and the caller moves it through a wire). Exports are cached per allocation, keyed by
// its base and the driver's buffer ID, which a freed and reallocated allocation never repeats;
// readers map a handle with import_wire (wire_ipc.hpp), whose cache is keyed by the handle,
// which a new allocation never repeats either.
#pragma once

#include <cstddef>
#include <string>

#include "ipc/wire_ipc.hpp"

namespace strider::ipc {

struct MemoryExport {
  WireHandle handle;                 // of the whole allocation
  const std::byte* base = nullptr;   // the allocation's first byte, in this process
  std::size_t bytes = 0;             // the allocation's size
  unsigned long long buffer_id = 0;  // the driver's, never repeated by a later allocation
};

// The export of the cudaMalloc allocation holding `address` (memory of GPU `device` in this
// process). False with `error` when it cannot be shared.
bool export_memory(const void* address, int device, MemoryExport& out, std::string& error);

// Whether the allocation `exported` names is still the one exported (same base, size and
// buffer ID): one driver query, so that a cached description of an object in it stays valid.
// The export is registered again where the cache had dropped it (own_export_base).
bool still_exported(const MemoryExport& exported);

// The base of this process's own allocation that `handle` exports (export_memory), or null:
// CUDA IPC opens no handle in the process that exported it, so import_wire maps a message to
// itself onto the allocation as it is.
std::byte* own_export_base(const WireHandle& handle);

}  // namespace strider::ipc
