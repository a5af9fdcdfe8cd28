// Where a buffer lives. The host engine may only touch memory the CPU can dereference; the GPU
// engine only memory the device can (device, managed, and pinned host memory mapped into the
// device's address space).
#pragma once

#include <cstddef>
#include <cstdint>

namespace strider::runtime {

enum class MemoryKind { Host, PinnedHost, Managed, Device };

struct PointerInfo {
  MemoryKind kind = MemoryKind::Host;
  int device = -1;                 // owning GPU of device/managed memory
  void* device_pointer = nullptr;  // the address kernels use; null when not device-accessible
};

// Classifies `p` (without CUDA, or without a usable GPU, everything is Host).
PointerInfo pointer_info(const void* p);

inline bool host_accessible(MemoryKind kind) { return kind != MemoryKind::Device; }
inline bool gpu_resident(MemoryKind kind) {
  return kind == MemoryKind::Device || kind == MemoryKind::Managed;
}

// A buffer as both engines see it: `host` is the address the application passed; `device` the
// address kernels use for it (null if the device cannot reach it). The memory is classified at
// host + probe, the first byte the operation touches (a type's origin may lie outside its
// allocation, e.g. with a negative lower bound or at MPI_BOTTOM).
struct BufferView {
  std::byte* host = nullptr;
  std::byte* device = nullptr;  // may be null and valid: MPI_BOTTOM with absolute addresses
  bool device_visible = false;
  PointerInfo info;
};
BufferView view_buffer(const void* address, std::int64_t probe);
// `v` advanced by `bytes` (the memory's classification stays).
inline BufferView shifted(BufferView v, std::int64_t bytes) {
  v.host += bytes;
  if (v.device) v.device += bytes;
  return v;
}

const char* to_string(MemoryKind kind);

}  // namespace strider::runtime
