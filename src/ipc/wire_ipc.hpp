// Device wire buffers shared between processes of one node (CUDA IPC): a rank exports the wire
// it packed, its peers map it and read their pieces straight from it, GPU to GPU. Wires are
// Strider's own: each is one cudaMalloc allocation (its own base), and the pool tells this file
// when it frees one, so an export never outlives its allocation. import_wire also maps the
// application's allocations that same-node collectives read in place (memory_export.hpp): those
// the application may free while a peer still has them mapped; the driver then keeps the
// memory until the peer's cache closes the mapping (at most 1024 mappings and 4 GiB per process).
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "ipc/wire_buffers.hpp"

namespace strider::ipc {

// Unpinned mappings kept open at most, by count and by bytes (wire_imports.hpp).
constexpr std::size_t kMaxImports = 1024;
constexpr std::size_t kMaxImportBytes = std::size_t{4} << 30;

// The IPC handle of a whole allocation (cudaIpcMemHandle_t's bytes).
struct WireHandle {
  std::array<unsigned char, 64> bytes{};
};

// The handle of a device wire; cached per allocation. False with `error` when the allocation
// cannot be shared (a build without CUDA, or the driver refuses).
bool export_wire(const WireBuffer& wire, WireHandle& out, std::string& error);

// A peer's wire of `bytes` bytes mapped into this process, for kernels on GPU `device` (peer
// access is enabled on first use where the two GPUs differ), and pinned: it stays mapped until
// unpin_wire. Mappings are cached by handle (wire_imports.hpp): a freed and reallocated
// allocation has a new handle, so a stale mapping is never returned. Null with `error` when it
// cannot be mapped.
std::byte* import_wire(const WireHandle& handle, std::size_t bytes, int device, std::string& error);
void unpin_wire(const std::byte* mapped);

// The pool frees `base` (device memory): its export is forgotten.
void forget_wire_export(const void* base);

// Closes every mapping (MPI_Finalize, while the CUDA runtime is still up).
void close_wire_imports();

}  // namespace strider::ipc
