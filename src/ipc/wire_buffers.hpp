// Wire buffers: where a message's packed bytes live between the pack and the MPI (send), or
// between the MPI and the unpack (receive). One pool per memory: plain host, pinned host
// (mapped, so kernels write it directly), and device memory per GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "ipc/size_class_pool.hpp"

namespace strider::ipc {

enum class WireMemory { Host, Pinned, Device };

struct WireBuffer;
void release_wire(WireBuffer& buffer);

// Owns its block: given back to its pool by release_wire or when destroyed.
struct WireBuffer {
  Block block;
  WireMemory memory = WireMemory::Host;
  int device = -1;  // the GPU of device memory
  std::byte* data() const { return block.data; }

  WireBuffer() = default;
  WireBuffer(WireBuffer&& other) noexcept
      : block(std::exchange(other.block, {})), memory(other.memory), device(other.device) {}
  WireBuffer& operator=(WireBuffer&& other) noexcept {
    if (this != &other) {
      release_wire(*this);
      block = std::exchange(other.block, {});
      memory = other.memory;
      device = other.device;
    }
    return *this;
  }
  ~WireBuffer() { release_wire(*this); }
};

// A buffer of at least `bytes` in `memory` (on `device` for device memory); false with `error`
// when none can be had.
bool acquire_wire(WireMemory memory, int device, std::size_t bytes, WireBuffer& out,
                  std::string& error);

struct PoolStats {
  std::size_t pinned_bytes = 0;
  std::size_t device_bytes = 0;
  std::uint64_t allocations = 0;  // pinned and device allocator calls
};
PoolStats pool_stats();

// Frees what the pools cache (MPI_Finalize: the CUDA runtime is still up).
void trim_pools();

// The CUDA allocators (cuda_allocators.cu, or failing stand-ins without CUDA).
Allocator pinned_allocator();
Allocator device_allocator(int device);

}  // namespace strider::ipc
