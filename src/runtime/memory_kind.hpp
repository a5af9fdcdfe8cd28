// Where a buffer lives. The host engine may only touch memory the CPU can dereference; device
// memory goes elsewhere (the GPU engine, or the system MPI).
#pragma once

namespace strider::runtime {

enum class MemoryKind { Host, PinnedHost, Managed, Device };

// Classifies `p`. Without CUDA (or without a usable GPU) everything is Host.
MemoryKind memory_kind(const void* p);

inline bool host_accessible(MemoryKind kind) { return kind != MemoryKind::Device; }

const char* to_string(MemoryKind kind);

}  // namespace strider::runtime
