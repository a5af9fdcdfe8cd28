#include "transfer/wire_view.hpp"

#include "transfer/methods.hpp"

namespace strider::transfer {

runtime::BufferView wire_view(WireMemory memory, std::byte* data, int device, Method method) {
  runtime::BufferView v;
  v.host = data;
  switch (memory) {
    case WireMemory::Host:
      break;
    case WireMemory::Pinned:
      v.info = {runtime::MemoryKind::PinnedHost, -1, data};
      v.device = data;
      v.device_visible = transfer_method(method).kernel_reaches_wire();
      break;
    case WireMemory::Device:
      v.info = {runtime::MemoryKind::Device, device, data};
      v.device = data;
      v.device_visible = true;
      break;
  }
  return v;
}

}  // namespace strider::transfer
