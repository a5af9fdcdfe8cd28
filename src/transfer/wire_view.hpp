// How the GPU engine sees a transfer method's wire buffer. The runtime's point-to-point path
// and strider-measure both use this, so the measured packs are the ones the runtime makes.
#pragma once

#include <cstddef>

#include "ipc/wire_buffers.hpp"
#include "runtime/memory_kind.hpp"
#include "transfer/method.hpp"

namespace strider::transfer {

// `data` in `memory` (on GPU `device` for device memory). Pinned memory is mapped (unified
// addressing: the device uses the host address); for the staged method it is presented as not
// device-visible, so the GPU engine packs into scratch and makes one DMA copy instead of
// writing it from the kernel.
runtime::BufferView wire_view(ipc::WireMemory memory, std::byte* data, int device, Method method);

inline runtime::BufferView wire_view(const ipc::WireBuffer& w, Method method) {
  return wire_view(w.memory, w.data(), w.device, method);
}

}  // namespace strider::transfer
