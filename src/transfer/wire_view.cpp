#include "transfer/wire_view.hpp"

namespace strider::transfer {

runtime::BufferView wire_view(ipc::WireMemory memory, std::byte* data, int device, Method method) {
  runtime::BufferView v;
  v.host = data;
  switch (memory) {
    case ipc::WireMemory::Host:
      break;
    case ipc::WireMemory::Pinned:
      v.info = {runtime::MemoryKind::PinnedHost, -1, data};
      v.device = data;
      v.device_visible = traits_of(method).kernel_reaches_wire;
      break;
    case ipc::WireMemory::Device:
      v.info = {runtime::MemoryKind::Device, device, data};
      v.device = data;
      v.device_visible = true;
      break;
  }
  return v;
}

}  // namespace strider::transfer
