#include "runtime/memory_kind.hpp"

namespace strider::runtime {

BufferView view_buffer(const void* address, std::int64_t probe) {
  BufferView v;
  v.host = static_cast<std::byte*>(const_cast<void*>(address));
  v.info = pointer_info(v.host + probe);
  if (gpu_resident(v.info.kind)) {
    v.device = v.host;
    v.device_visible = true;
  } else if (v.info.kind == MemoryKind::PinnedHost && v.info.device_pointer != nullptr) {
    v.device = static_cast<std::byte*>(v.info.device_pointer) - probe;
    v.device_visible = true;
  }
  return v;
}

const char* to_string(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::Host:
      return "host";
    case MemoryKind::PinnedHost:
      return "pinned-host";
    case MemoryKind::Managed:
      return "managed";
    case MemoryKind::Device:
      return "device";
  }
  return "?";
}

}  // namespace strider::runtime
