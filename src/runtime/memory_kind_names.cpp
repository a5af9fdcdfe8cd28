#include "runtime/memory_kind.hpp"

namespace strider::runtime {

const char* to_string(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::Host: return "host";
    case MemoryKind::PinnedHost: return "pinned-host";
    case MemoryKind::Managed: return "managed";
    case MemoryKind::Device: return "device";
  }
  return "?";
}

}  // namespace strider::runtime
